package harness

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/ramjet-dev/ramjet/test/harness/internal/container"
)

// NodeName is the spec.nodeName of the pods the harness runs: the host,
// the one node, whose address in a Network is its HostIP.
const NodeName = "harness"

// Timeouts of the pod runner.
const (
	// minGrace is the least time a container gets between its stop signal
	// and SIGKILL, as kubelet's minimum.
	minGrace = 2 * time.Second
	// setupTimeout bounds a pod's start: the API calls and its init
	// containers.
	setupTimeout = 2 * time.Minute
	apiTimeout   = 30 * time.Second
)

// PodOptions change how RunPod runs a pod.
type PodOptions struct {
	// Registry maps the containers' images to what runs for them; nil is
	// DefaultRegistry (Ramjet's image).
	Registry Registry
	// ProbePeriod, when above zero, replaces the periodSeconds of the
	// readiness probes (the thresholds stay), so that a test sees a pod
	// ready sooner than a kubelet would show it; zero keeps the manifest's.
	ProbePeriod time.Duration
	// CRILog, when true, also writes each container's output in the CRI
	// log format, as kubelet's log files hold it (CRILogPath), for a
	// kubelet-like log endpoint that serves `kubectl logs`.
	CRILog bool
}

// Pod is a pod of a workload that the harness runs as a kubelet would,
// with local processes (see RunPod). Its methods may be called from any
// goroutine.
type Pod struct {
	// Name, Namespace and UID are the Pod object's.
	Name, Namespace string
	UID             types.UID
	// IP is the pod's address, in its Network's /24.
	IP netip.Addr
	// Dir holds the pod's volumes and the containers' logs
	// (CONTAINER.log).
	Dir string

	client kubernetes.Interface
	opts   PodOptions
	net    *podNetwork
	proxy  *apiProxy
	inits  []*containerRun
	// containers are the regular containers, in the manifest's order.
	containers []*containerRun

	mu sync.Mutex // guards obj.Status, initialized, terminating, inits, containers and the containers' state
	// obj is the Pod object as created (after the API server's admission),
	// with the status the runner keeps.
	obj         *corev1.Pod
	initialized bool
	terminating bool
	// changes counts the changes of the state, written how many of them
	// the API server has.
	changes, written int

	kick       chan struct{} // a status change to write
	quit       chan struct{} // closed when the pod stops: ends the status writer and the deletion watch
	writerDone chan struct{} // closed when the status writer has ended
	// deleted receives the grace period of a deletion through the API.
	deleted chan time.Duration

	stopOnce sync.Once
	stopErr  error
}

// containerRun is one container of a running pod.
type containerRun struct {
	spec  *corev1.Container
	field string // where it is in the Pod, e.g. "spec.containers[1]"
	image string // the repository
	// init is what podinit sets up and runs: the container's process.
	init    container.Spec
	logPath string
	// exited is closed when the container's process has ended.
	exited chan struct{}

	// cmd is set by startContainer, then read-only.
	cmd *exec.Cmd

	// state is guarded by Pod.mu.
	state containerState
}

// containerState is what the status reports of a container.
type containerState struct {
	started, finished time.Time
	pid, exitCode     int
	ready             bool
	// probeErr is why the last readiness probe failed.
	probeErr error
}

// RunPod runs the pod of workload w (a Deployment or DaemonSet read from
// the API server) as a kubelet would, in a network namespace of its own
// joined to n, and deletes it when t ends (the containers' logs go to t's
// log when t failed). It returns once the init containers have completed
// and the containers started; use WaitReady to wait for readiness.
//
// The pod is created in the API server from the workload's template
// (generated name "NAME-", the template's labels and annotations, owned by
// the workload, spec.nodeName NodeName) and goes through its admission:
// what runs is the stored Pod, so a pod that automounts its service
// account token gets the kube-api-access volume the API server adds. Its
// status follows the pod: phase, podIP, hostIP, the init containers'
// and containers' states, and Ready from the readiness probes. Deleting
// the Pod object (Delete, or kubectl delete) stops it as kubelet does.
//
// Every container runs as its securityContext's runAsUser and runAsGroup
// (else the image's user), with the pod's supplementalGroups and fsGroup,
// no_new_privs for allowPrivilegeEscalation: false, exactly the command,
// args and environment of the manifest (env values, fieldRef,
// configMapKeyRef, secretKeyRef, envFrom, $(VAR) expansion, and the
// Service variables kubelet injects, KUBERNETES_SERVICE_HOST and _PORT
// among them), in its own mount and UTS namespaces: its root file system
// holds the image's files (see Image), /proc, a few devices, /etc/hosts,
// /etc/hostname, /etc/resolv.conf, the termination log, and the volumes
// at their mount paths (readOnly honoured, readOnlyRootFilesystem too).
// Volumes are emptyDir (a folder of the pod's, owned by the fsGroup),
// configMap, secret, downwardAPI and projected (serviceAccountToken from
// the TokenRequest API, bound to the Pod, with its audience and
// expiration; configMap, secret, downwardAPI), written as kubelet writes
// them. Like kube-controller-manager, the harness publishes the cluster's
// CA as the ConfigMap kube-root-ca.crt of the namespace and creates its
// ServiceAccount "default".
//
// The pod's network namespace has an address of n, and the "kubernetes"
// Service's cluster IP on its loopback interface, where the harness
// forwards to the API server on the host's loopback: in-cluster
// configuration works unchanged, and traffic stays on loopback and
// 198.18.0.0/15. The test process reaches the pod at its IP, and the pod
// reaches n's backends and the host.
//
// There is no cluster DNS and no kube-proxy: Service names do not resolve
// and cluster IPs other than the API server's lead nowhere (Ramjet, like
// any ingress controller, reaches the endpoints' addresses). Resources
// are not enforced, and only readiness probes run by themselves (Probe
// runs a liveness probe on demand).
//
// What the harness cannot run as written fails RunPod with an error that
// names the field (an unsupported volume kind, probe or security
// setting); an image missing from the registry fails it naming the image.
// A container that exits is not restarted: its status shows it
// terminated and WaitReady fails naming it.
func RunPod(t testing.TB, c *Cluster, n *Network, w Workload, opts PodOptions) *Pod {
	t.Helper()
	p, err := NewPod(c, n, w, t.TempDir(), opts)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			p.logTails(t)
		}
		if err := p.Delete(); err != nil {
			t.Errorf("harness: %v", err)
		}
	})
	return p
}

// NewPod is RunPod for a caller without a testing.TB (a demo): the pod
// keeps its files in dir, which must exist, and the caller must call
// Delete. On error nothing is left running and the Pod object is deleted.
func NewPod(c *Cluster, n *Network, w Workload, dir string, opts PodOptions) (*Pod, error) {
	if opts.Registry == nil {
		reg, err := DefaultRegistry()
		if err != nil {
			return nil, err
		}
		opts.Registry = reg
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	obj, err := w.pod(ctx, c.Client)
	if err != nil {
		return nil, err
	}
	if err := publishNamespaceDefaults(ctx, c, w.Namespace); err != nil {
		return nil, err
	}
	created, err := c.Client.CoreV1().Pods(w.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating the pod of %s: %w", w, err)
	}
	return runPod(ctx, c, n, created, dir, opts, " of "+w.String())
}

// AdoptPod runs pod, a Pod object that exists already (created by a
// controller, such as a ReplicaSet's, and bound to a node by a scheduler),
// as NewPod runs the pod it creates: its status, deletion through the API
// and Delete work the same way. It does not publish kube-root-ca.crt or
// the ServiceAccount "default": the cluster's kube-controller-manager does.
// The pod keeps its files in dir, which must exist, and the caller must
// call Delete (or delete the object). On error nothing is left running and
// the Pod object is deleted.
func AdoptPod(c *Cluster, n *Network, pod *corev1.Pod, dir string, opts PodOptions) (*Pod, error) {
	if opts.Registry == nil {
		reg, err := DefaultRegistry()
		if err != nil {
			return nil, err
		}
		opts.Registry = reg
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	return runPod(ctx, c, n, pod.DeepCopy(), dir, opts, "")
}

// runPod starts the pod of the stored object obj; of says whose pod it
// is in errors.
func runPod(ctx context.Context, c *Cluster, n *Network, obj *corev1.Pod, dir string, opts PodOptions, of string) (*Pod, error) {
	p := &Pod{
		Name: obj.Name, Namespace: obj.Namespace, UID: obj.UID, Dir: dir,
		client: c.Client, opts: opts, obj: obj,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), writerDone: make(chan struct{}),
		deleted: make(chan time.Duration, 1),
	}
	if err := p.start(ctx, c, n); err != nil {
		return nil, errors.Join(fmt.Errorf("pod %s/%s%s: %w", p.Namespace, p.Name, of, err), p.terminate(0))
	}
	return p, nil
}

// start sets the pod up, runs its init containers and starts its
// containers.
func (p *Pod) start(ctx context.Context, c *Cluster, n *Network) error {
	if err := checkPod(p.obj); err != nil {
		return err
	}
	pn, err := n.attachPod()
	if err != nil {
		return err
	}
	p.net, p.IP = pn, pn.ip
	p.setInitialStatus(n.HostIP)
	go p.writeStatus()
	p.watchDeletion()

	in, err := fetchInputs(ctx, p.client, p.obj)
	if err != nil {
		return err
	}
	if err := p.startAPIProxy(ctx, c); err != nil {
		return err
	}
	if err := p.prepare(ctx, in); err != nil {
		return err
	}
	for _, ic := range p.inits {
		if err := p.runInit(ic); err != nil {
			return err
		}
	}
	p.update(func() { p.initialized = true })
	for _, rc := range p.containers {
		if err := p.startContainer(rc); err != nil {
			return err
		}
		if err := p.postStart(rc); err != nil {
			return err
		}
		go p.watchReadiness(rc)
	}
	go p.awaitDeletion()
	return nil
}

// PID returns the process ID of container's process, as the host sees it:
// /proc/PID/root is the container's file system as it sees it, and
// /proc/PID/status its user and groups.
func (p *Pod) PID(container string) (int, error) {
	c, err := p.container(container)
	if err != nil {
		return 0, err
	}
	return p.pid(c)
}

// pid returns the process ID of c while it runs.
func (p *Pod) pid(c *containerRun) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.state.pid == 0 {
		return 0, fmt.Errorf("container %s has not started", c.spec.Name)
	}
	if !c.state.finished.IsZero() {
		return 0, fmt.Errorf("container %s has exited (code %d)", c.spec.Name, c.state.exitCode)
	}
	return c.state.pid, nil
}

// Log returns the output of container (an init container or a
// container), with the results and output of its lifecycle hooks
// between lines starting "=== harness:".
func (p *Pod) Log(container string) string {
	c, err := p.container(container)
	if err != nil {
		return err.Error()
	}
	return p.log(c)
}

// VolumeDir is the host folder that holds the pod's volume name (what the
// containers see at its mount paths), for a caller that reads what the pod
// wrote (a demo printing where ramjet.yaml is).
func (p *Pod) VolumeDir(name string) string { return volumeDir(p.Dir, name) }

// volumeDir is where the pod of folder dir keeps its volume name.
func volumeDir(dir, name string) string { return filepath.Join(dir, "volumes", name) }

// LogPath is the host file of the container's log.
func (p *Pod) LogPath(container string) string { return filepath.Join(p.Dir, container+".log") }

// CRILogPath is the host file of the container's log in the CRI format
// (written with PodOptions.CRILog): one line of output per line,
// "TIME STREAM TAG TEXT", TIME in RFC 3339 with nanoseconds, STREAM stdout
// or stderr, TAG F for a whole line and P for the part of a longer one.
func (p *Pod) CRILogPath(container string) string {
	return filepath.Join(p.Dir, container+".cri.log")
}

func (p *Pod) log(c *containerRun) string {
	data, _ := os.ReadFile(c.logPath)
	return string(data)
}

// logTails writes the last lines of every container's log to t's log.
func (p *Pod) logTails(t testing.TB) {
	t.Helper()
	for _, c := range p.all() {
		t.Logf("harness: the test failed; log of container %s of pod %s/%s (%s):\n%s", c.spec.Name, p.Namespace, p.Name, c.logPath, tail(p.log(c), 100))
	}
}

// all returns the init containers and the containers.
func (p *Pod) all() []*containerRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Concat(p.inits, p.containers)
}

// container returns the init container or container named name.
func (p *Pod) container(name string) (*containerRun, error) {
	for _, c := range p.all() {
		if c.spec.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("pod %s/%s has no container %q", p.Namespace, p.Name, name)
}

// update changes the pod's state under its lock and has the status
// written.
func (p *Pod) update(change func()) {
	p.mu.Lock()
	change()
	p.changes++
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default: // a write is pending already
	}
}
