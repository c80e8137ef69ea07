package harness

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// statusRetry is how often a status write that failed (the API server
// stopped) is tried again.
const statusRetry = time.Second

// setInitialStatus fills in what kubelet reports before the containers
// run: the addresses and the start time.
func (p *Pod) setInitialStatus(hostIP netip.Addr) {
	p.update(func() {
		s := &p.obj.Status
		s.HostIP, s.HostIPs = hostIP.String(), []corev1.HostIP{{IP: hostIP.String()}}
		s.PodIP, s.PodIPs = p.IP.String(), []corev1.PodIP{{IP: p.IP.String()}}
		s.StartTime = &metav1.Time{Time: time.Now()}
	})
}

// status returns the pod's status as kubelet would report it, keeping the
// transition times of old's conditions that did not change, and the count
// of changes it holds.
func (p *Pod) status(old corev1.PodStatus) (corev1.PodStatus, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.obj.Status
	s.QOSClass = old.QOSClass // set by the API server, immutable
	s.InitContainerStatuses = make([]corev1.ContainerStatus, len(p.inits))
	for i, c := range p.inits {
		s.InitContainerStatuses[i] = c.status("PodInitializing")
	}
	waiting := "PodInitializing"
	if p.initialized {
		waiting = "ContainerCreating"
	}
	s.ContainerStatuses = make([]corev1.ContainerStatus, len(p.containers))
	var unready []string
	running, failed, finished := 0, 0, 0
	for i, c := range p.containers {
		cs := c.status(waiting)
		s.ContainerStatuses[i] = cs
		if !cs.Ready {
			unready = append(unready, c.spec.Name)
		}
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			finished++
			if cs.State.Terminated.ExitCode != 0 {
				failed++
			}
		}
	}
	switch {
	case !p.initialized || len(p.containers) == 0 || running+finished < len(p.containers):
		s.Phase = corev1.PodPending
	case running > 0:
		s.Phase = corev1.PodRunning
	case failed > 0:
		s.Phase = corev1.PodFailed
	default:
		s.Phase = corev1.PodSucceeded
	}
	ready := p.initialized && len(p.containers) > 0 && len(unready) == 0
	notReady := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	s.Conditions = []corev1.PodCondition{
		condition(corev1.PodReadyToStartContainers, true, "", ""),
		condition(corev1.PodInitialized, p.initialized, "ContainersNotInitialized", "containers with incomplete status: init containers"),
		condition(corev1.ContainersReady, ready, "ContainersNotReady", notReady),
		condition(corev1.PodReady, ready, "ContainersNotReady", notReady),
		condition(corev1.PodScheduled, true, "", ""),
	}
	for i, c := range s.Conditions {
		for _, o := range old.Conditions {
			if o.Type == c.Type && o.Status == c.Status {
				s.Conditions[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return s, p.changes
}

// condition returns a pod condition, with reason and message when false.
func condition(typ corev1.PodConditionType, ok bool, reason, message string) corev1.PodCondition {
	c := corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}
	if !ok {
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, reason, message
	}
	return c
}

// status returns the container's status; waiting is the reason of a
// container that has not started. The caller holds Pod.mu.
func (c *containerRun) status(waiting string) corev1.ContainerStatus {
	s := c.state
	cs := corev1.ContainerStatus{Name: c.spec.Name, Image: c.spec.Image, ImageID: "harness://" + c.image}
	if s.pid != 0 {
		cs.ContainerID = "harness://" + strconv.Itoa(s.pid)
	}
	switch {
	case s.pid == 0:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting}
	case s.finished.IsZero():
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(s.started)}
		cs.Started, cs.Ready = new(true), s.ready
	default:
		reason := "Completed"
		if s.exitCode != 0 {
			reason = "Error"
		}
		cs.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: int32(s.exitCode), Reason: reason, ContainerID: cs.ContainerID,
			StartedAt: metav1.NewTime(s.started), FinishedAt: metav1.NewTime(s.finished),
		}
		cs.Started = new(false)
	}
	return cs
}

// writeStatus writes the status to the API server after every change
// (coalesced), retrying while it cannot be reached, until the pod stops.
func (p *Pod) writeStatus() {
	defer close(p.writerDone)
	var retryC <-chan time.Time
	for {
		select {
		case <-p.kick:
		case <-retryC:
		case <-p.quit:
			return
		}
		retryC = nil
		if err := p.pushStatus(); err != nil {
			retryC = time.After(statusRetry)
		}
	}
}

// pushStatus writes the current status once.
func (p *Pod) pushStatus() error {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	pods := p.client.CoreV1().Pods(p.Namespace)
	var changes int
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != p.UID {
			return nil // another pod of the same name
		}
		cur.Status, changes = p.status(cur.Status)
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err == nil {
		p.mu.Lock()
		p.written = max(p.written, changes)
		p.mu.Unlock()
	}
	return err
}

// watchDeletion notices, until the pod stops, when its object is deleted
// (its deletion timestamp set, or the object removed) and sends the grace
// period to p.deleted.
func (p *Pod) watchDeletion() {
	notify := func(grace time.Duration) {
		select {
		case p.deleted <- grace:
		default: // noticed already
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(p.client, 0,
		informers.WithNamespace(p.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", p.Name).String()
		}))
	informer := factory.Core().V1().Pods().Informer()
	seen := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && pod.UID == p.UID && pod.DeletionTimestamp != nil {
			grace := p.gracePeriod()
			if pod.DeletionGracePeriodSeconds != nil {
				grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
			}
			notify(grace)
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: func(any) { notify(p.gracePeriod()) },
	})
	factory.Start(p.quit)
}

// awaitDeletion stops the pod, once it has started, when its object is
// deleted through the API, as kubelet does.
func (p *Pod) awaitDeletion() {
	select {
	case grace := <-p.deleted:
		_ = p.terminate(grace)
	case <-p.quit:
	}
}
