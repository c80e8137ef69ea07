package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Delete deletes the Pod object gracefully and stops the pod as kubelet
// does: for each container at once, its preStop hook (exec in the
// container, httpGet or sleep), then its stop signal (SIGTERM unless
// lifecycle.stopSignal says otherwise), then SIGKILL when it still runs
// after terminationGracePeriodSeconds (counted from the hook's start, at
// least 2 s). Then the object is removed. It returns once everything has
// stopped; a second call returns the first's result. When the API server
// cannot be reached the pod is stopped all the same.
func (p *Pod) Delete() error {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	err := p.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(p.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		err = fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err)
	} else {
		err = nil
	}
	return errors.Join(err, p.terminate(p.gracePeriod()))
}

// gracePeriod is the pod's terminationGracePeriodSeconds.
func (p *Pod) gracePeriod() time.Duration {
	if s := p.obj.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

// terminate stops the containers within grace, releases the pod's
// namespaces and proxy, and removes the Pod object; it runs once, and
// later calls return its result. It runs after start (from NewPod when
// start failed, Delete, or awaitDeletion), never beside it.
func (p *Pod) terminate(grace time.Duration) error {
	p.stopOnce.Do(func() {
		p.update(func() { p.terminating = true })
		var wg sync.WaitGroup
		for _, c := range p.all() {
			wg.Go(func() { p.stopContainer(c, grace) })
		}
		wg.Wait()
		if p.proxy != nil {
			p.proxy.close()
		}
		close(p.quit)
		if p.net != nil {
			<-p.writerDone
			p.net.close()
		}
		p.stopErr = p.removeObject()
	})
	return p.stopErr
}

// stopContainer runs c's preStop hook, sends its stop signal, and kills
// it when it still runs at the end of grace.
func (p *Pod) stopContainer(c *containerRun, grace time.Duration) {
	if c.cmd == nil {
		return
	}
	select {
	case <-c.exited:
		return
	default:
	}
	deadline := time.Now().Add(grace)
	if c.spec.Lifecycle != nil && c.spec.Lifecycle.PreStop != nil {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		out, err := p.runHandler(ctx, c, c.spec.Lifecycle.PreStop)
		cancel()
		p.logHook(c, "preStop", out, err)
	}
	sig, _ := stopSignal(c.spec) // checked by checkPod
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.exited:
	case <-time.After(max(time.Until(deadline), minGrace)):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) // its process group
		<-c.exited
	}
}

// removeObject deletes the Pod object at once, as kubelet does once its
// containers have stopped.
func (p *Pod) removeObject() error {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	err := p.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64(0)), Preconditions: metav1.NewUIDPreconditions(string(p.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("removing pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
