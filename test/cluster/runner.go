//go:build conformance

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// Timeouts of the pod runner.
const (
	apiTimeout = 30 * time.Second
	// rootCATimeout bounds the wait for kube-root-ca.crt in a new
	// namespace, which a pod's service account volume needs.
	rootCATimeout = 30 * time.Second
)

// rootCAConfigMap is the ConfigMap kube-controller-manager publishes in
// every namespace, which the API server's kube-api-access volume names.
const rootCAConfigMap = "kube-root-ca.crt"

// podRunner plays kubelet for the pods bound to the Node: it runs each
// with harness.AdoptPod, or, when one of its images has no program,
// reports it running and ready without a process (a placeholder).
type podRunner struct {
	api    *harness.Cluster
	client kubernetes.Interface
	net    *harness.Network
	reg    harness.Registry
	dir    string
	quit   chan struct{}
	wg     sync.WaitGroup // the pods being started

	mu      sync.Mutex // guards the fields below
	pods    map[types.UID]*runningPod
	errs    []error
	stopped bool
}

// runningPod is a pod the runner has taken: pod is nil for a placeholder
// or while it starts.
type runningPod struct {
	namespace, name string
	pod             *harness.Pod
}

// startPodRunner watches the pods bound to NodeName and runs them, keeping
// their files under dir.
func startPodRunner(api *harness.Cluster, n *harness.Network, reg harness.Registry, dir string) *podRunner {
	r := &podRunner{
		api: api, client: api.Client, net: n, reg: reg, dir: dir,
		quit: make(chan struct{}), pods: map[types.UID]*runningPod{},
	}
	factory := informers.NewSharedInformerFactoryWithOptions(r.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", NodeName).String()
		}))
	informer := factory.Core().V1().Pods().Informer()
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.seen,
		UpdateFunc: func(_, obj any) { r.seen(obj) },
		DeleteFunc: r.gone,
	})
	factory.Start(r.quit)
	return r
}

// seen takes a pod the runner has not taken yet, and removes a deleted
// placeholder's object.
func (r *podRunner) seen(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rp, taken := r.pods[pod.UID]
	switch {
	case r.stopped:
	case taken && pod.DeletionTimestamp != nil && rp.pod == nil && !r.runs(pod):
		r.wg.Go(func() { r.removePlaceholder(pod) })
	case !taken && pod.DeletionTimestamp == nil && !terminal(pod):
		r.pods[pod.UID] = &runningPod{namespace: pod.Namespace, name: pod.Name}
		r.wg.Go(func() { r.run(pod) })
	}
}

// gone forgets a pod whose object was removed.
func (r *podRunner) gone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		r.mu.Lock()
		delete(r.pods, pod.UID)
		r.mu.Unlock()
	}
}

// terminal reports whether the pod has ended.
func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// runs reports whether every image of the pod has a program.
func (r *podRunner) runs(pod *corev1.Pod) bool {
	for _, c := range append(pod.Spec.InitContainers[:len(pod.Spec.InitContainers):len(pod.Spec.InitContainers)], pod.Spec.Containers...) {
		if _, ok := r.reg[harness.Repository(c.Image)]; !ok {
			return false
		}
	}
	return true
}

// run starts the pod, recording why when it cannot (unless the pod was
// deleted meanwhile).
func (r *podRunner) run(pod *corev1.Pod) {
	var err error
	if r.runs(pod) {
		err = r.adopt(pod)
	} else {
		err = r.placeholder(pod)
	}
	if err != nil && !r.deleted(pod) {
		r.mu.Lock()
		r.errs = append(r.errs, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err))
		r.mu.Unlock()
	}
}

// adopt runs the pod with its programs.
func (r *podRunner) adopt(pod *corev1.Pod) error {
	if err := r.waitRootCA(pod); err != nil {
		return err
	}
	dir := filepath.Join(r.dir, pod.Namespace+"_"+pod.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p, err := harness.AdoptPod(r.api, r.net, pod, dir, harness.PodOptions{Registry: r.reg, CRILog: true})
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rp, ok := r.pods[pod.UID]; ok {
		rp.pod = p
		return nil
	}
	// Its object went away while it started: the harness stops it.
	r.pods[pod.UID] = &runningPod{namespace: pod.Namespace, name: pod.Name, pod: p}
	return nil
}

// waitRootCA waits until the pod's namespace has kube-root-ca.crt when its
// volumes name it: the controller publishes it shortly after the namespace
// appears, kubelet would retry the mount meanwhile.
func (r *podRunner) waitRootCA(pod *corev1.Pod) error {
	if !namesRootCA(pod) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), rootCATimeout)
	defer cancel()
	for {
		_, err := r.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, rootCAConfigMap, metav1.GetOptions{})
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no ConfigMap %s in namespace %s after %s", rootCAConfigMap, pod.Namespace, rootCATimeout)
		case <-r.quit:
			return errors.New("the cluster stopped")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// namesRootCA reports whether a projected volume of the pod holds
// kube-root-ca.crt.
func namesRootCA(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil && s.ConfigMap.Name == rootCAConfigMap {
				return true
			}
		}
	}
	return false
}

// deleted reports whether the pod's object is gone or being deleted.
func (r *podRunner) deleted(pod *corev1.Pod) bool {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	cur, err := r.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	return apierrors.IsNotFound(err) || (err == nil && (cur.UID != pod.UID || cur.DeletionTimestamp != nil))
}

// placeholder reports the pod running and ready at an address of the
// Network where nothing listens.
func (r *podRunner) placeholder(pod *corev1.Pod) error {
	addr, err := r.net.AddAddr()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	pods := r.client.CoreV1().Pods(pod.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != pod.UID {
			return nil
		}
		cur.Status = placeholderStatus(cur, addr.String(), r.net.HostIP.String())
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// placeholderStatus is the status of a running, ready pod at ip whose
// containers run no process.
func placeholderStatus(pod *corev1.Pod, ip, hostIP string) corev1.PodStatus {
	now := metav1.Now()
	s := corev1.PodStatus{
		Phase: corev1.PodRunning, QOSClass: pod.Status.QOSClass,
		HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		StartTime: &now,
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		s.Conditions = append(s.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "cluster://no-program/" + harness.Repository(c.Image),
			ContainerID: "cluster://" + string(pod.UID) + "/" + c.Name,
			Ready:       true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return s
}

// removePlaceholder removes a deleted placeholder's object at once: it has
// nothing to stop.
func (r *podRunner) removePlaceholder(pod *corev1.Pod) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	err := r.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64(0)), Preconditions: metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		r.mu.Lock()
		r.errs = append(r.errs, fmt.Errorf("removing pod %s/%s: %w", pod.Namespace, pod.Name, err))
		r.mu.Unlock()
	}
}

// lookup returns the running pod namespace/name, nil for a placeholder;
// false when the runner has no such pod.
func (r *podRunner) lookup(namespace, name string) (*harness.Pod, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rp := range r.pods {
		if rp.namespace == namespace && rp.name == name {
			return rp.pod, true
		}
	}
	return nil, false
}

// errors returns why pods could not run.
func (r *podRunner) errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// stop stops watching, waits for the pods being started, and deletes every
// pod the runner runs.
func (r *podRunner) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	close(r.quit)
	r.wg.Wait()
	r.mu.Lock()
	var running []*harness.Pod
	for _, rp := range r.pods {
		if rp.pod != nil {
			running = append(running, rp.pod)
		}
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range running {
		wg.Go(func() { _ = p.Delete() })
	}
	wg.Wait()
}
