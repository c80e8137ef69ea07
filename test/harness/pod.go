package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

	// startMu is held while a container starts, so that terminate never
	// misses a process that is being started.
	startMu sync.Mutex
	mu      sync.Mutex // guards obj.Status, initialized, terminating, inits, containers and the containers' state
	// obj is the Pod object as created (after the API server's admission),
	// with the status the runner keeps.
	obj         *corev1.Pod
	initialized bool
	terminating bool
	// changes counts the changes of the state, written how many of them
	// the API server has.
	changes, written int

	kick     chan struct{} // a status change to write
	quit     chan struct{} // closed when the pod stops: ends the status writer and the deletion watch
	writerUp chan struct{} // closed when the status writer has ended

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
	p := &Pod{
		Name: created.Name, Namespace: created.Namespace, UID: created.UID, Dir: dir,
		client: c.Client, opts: opts, obj: created,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), writerUp: make(chan struct{}),
	}
	if err := p.start(ctx, c, n); err != nil {
		return nil, errors.Join(fmt.Errorf("pod %s/%s of %s: %w", p.Namespace, p.Name, w, err), p.terminate(0))
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
	return nil
}

// startAPIProxy forwards the "kubernetes" Service's address inside the
// pod to the API server.
func (p *Pod) startAPIProxy(ctx context.Context, c *Cluster) error {
	svc, err := p.client.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the API server's Service default/kubernetes: %w", err)
	}
	addr, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil || len(svc.Spec.Ports) == 0 {
		return fmt.Errorf("the Service default/kubernetes has no cluster IP and port (%q)", svc.Spec.ClusterIP)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return err
	}
	p.proxy, err = startAPIProxy(p.net, netip.AddrPortFrom(addr, uint16(svc.Spec.Ports[0].Port)), u.Host)
	return err
}

// prepare writes the volumes and the pod's files and plans every
// container, so that nothing runs when one of them cannot.
func (p *Pod) prepare(ctx context.Context, in *podInputs) error {
	vols, err := planVolumes(p.obj, p.Dir)
	if err != nil {
		return err
	}
	if err := p.writeVolumes(ctx, vols, in); err != nil {
		return err
	}
	files, err := p.writePodFiles()
	if err != nil {
		return err
	}
	var errs []error
	var inits, containers []*containerRun
	plan := func(c *corev1.Container, field string) *containerRun {
		rc, err := p.planContainer(c, field, in, vols, files)
		errs = append(errs, err)
		return rc
	}
	for i := range p.obj.Spec.InitContainers {
		inits = append(inits, plan(&p.obj.Spec.InitContainers[i], fmt.Sprintf("spec.initContainers[%d]", i)))
	}
	for i := range p.obj.Spec.Containers {
		containers = append(containers, plan(&p.obj.Spec.Containers[i], fmt.Sprintf("spec.containers[%d]", i)))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	p.update(func() { p.inits, p.containers = inits, containers })
	return nil
}

// planContainer resolves what container c runs: image, environment,
// command, user and mounts.
func (p *Pod) planContainer(c *corev1.Container, field string, in *podInputs, vols map[string]*podVolume, files podFiles) (*containerRun, error) {
	img, err := p.opts.Registry.Image(c.Image)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	p.mu.Lock()
	env, kubelet, err := containerEnv(p.obj, c, field, img, in)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	argv, err := containerArgv(c, field, img, kubelet)
	if err != nil {
		return nil, err
	}
	cred, err := containerCredential(p.obj, c, field, img)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.Dir, "containers", c.Name)
	if err := os.MkdirAll(filepath.Join(dir, "root"), 0o755); err != nil {
		return nil, err
	}
	termination := filepath.Join(dir, "termination-log")
	if err := os.WriteFile(termination, nil, 0o666); err != nil {
		return nil, err
	}
	if err := os.Chmod(termination, 0o666); err != nil { // whatever the umask
		return nil, err
	}
	mounts, err := containerMounts(c, field, img, vols, files, termination)
	if err != nil {
		return nil, err
	}
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	return &containerRun{
		spec: c, field: field, image: Repository(c.Image),
		logPath: filepath.Join(p.Dir, c.Name+".log"),
		exited:  make(chan struct{}),
		init: container.Spec{
			NetNS: p.net.path(), Root: filepath.Join(dir, "root"), Hostname: podHostname(p.obj),
			Mounts:       mounts,
			ReadOnlyRoot: sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
			NoNewPrivs:   sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
			UID:          cred.Uid, GID: cred.Gid, Groups: cred.Groups,
			Env: env, Dir: firstNonEmpty(c.WorkingDir, img.WorkingDir, "/"), Argv: argv,
		},
	}, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// writeVolumes creates the emptyDir folders and writes the files of the
// other volumes.
func (p *Pod) writeVolumes(ctx context.Context, vols map[string]*podVolume, in *podInputs) error {
	var fsGroup *int64
	if sc := p.obj.Spec.SecurityContext; sc != nil {
		fsGroup = sc.FSGroup
	}
	for i := range p.obj.Spec.Volumes {
		v := &p.obj.Spec.Volumes[i]
		pv := vols[v.Name]
		if pv.kind == kindEmptyDir {
			if err := makeEmptyDir(pv.dir, fsGroup); err != nil {
				return err
			}
			continue
		}
		files, err := volumeFiles(p.obj, v, fmt.Sprintf("spec.volumes[%d]", i), in, func(audience string, expiration int64) (string, error) {
			return p.token(ctx, audience, expiration)
		})
		if err != nil {
			return err
		}
		if err := writeVolume(pv.dir, files, fsGroup); err != nil {
			return fmt.Errorf("writing volume %s: %w", v.Name, err)
		}
	}
	return makeSubPaths(p.obj, vols, fsGroup)
}

// writePodFiles writes the pod's /etc/hosts, /etc/hostname and
// /etc/resolv.conf, as kubelet and the runtime write them (there is no
// cluster DNS: resolv.conf names no server).
func (p *Pod) writePodFiles() (podFiles, error) {
	dir := filepath.Join(p.Dir, "etc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return podFiles{}, err
	}
	host := podHostname(p.obj)
	files := podFiles{hosts: filepath.Join(dir, "hosts"), hostname: filepath.Join(dir, "hostname"), resolvConf: filepath.Join(dir, "resolv.conf")}
	for path, content := range map[string]string{
		files.hosts: "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
			p.IP.String() + "\t" + host + "\n",
		files.hostname:   host + "\n",
		files.resolvConf: "# the harness runs no cluster DNS\nsearch " + p.Namespace + ".svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return podFiles{}, err
		}
	}
	return files, nil
}

// runInit runs an init container to its end; one that fails fails the pod.
func (p *Pod) runInit(c *containerRun) error {
	if err := p.startContainer(c); err != nil {
		return err
	}
	select {
	case <-c.exited:
	case <-time.After(setupTimeout):
		return fmt.Errorf("init container %s has not completed after %s; its log:\n%s", c.spec.Name, setupTimeout, tail(p.log(c), 40))
	}
	p.mu.Lock()
	code := c.state.exitCode
	p.mu.Unlock()
	if code != 0 {
		return fmt.Errorf("init container %s exited with code %d; its log:\n%s", c.spec.Name, code, tail(p.log(c), 40))
	}
	return nil
}

// startContainer starts c's process, whose output goes to its log,
// unless the pod is being stopped.
func (p *Pod) startContainer(c *containerRun) error {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	p.mu.Lock()
	stopping := p.terminating
	p.mu.Unlock()
	if stopping {
		return errors.New("the pod was deleted while it started")
	}
	log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close() // the process has its own copy
	cmd, err := startInContainer(c.init, log, log)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", c.field, c.spec.Name, err)
	}
	c.cmd = cmd
	p.update(func() { c.state.started, c.state.pid = time.Now(), cmd.Process.Pid })
	go func() {
		_ = cmd.Wait()
		p.update(func() { c.state.finished, c.state.exitCode = time.Now(), exitCode(cmd.ProcessState) })
		close(c.exited)
	}()
	return nil
}

// exitCode is the code kubelet reports: the exit status, or 128 plus the
// signal that ended the process.
func exitCode(s *os.ProcessState) int {
	if ws, ok := s.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return s.ExitCode()
}

// postStart runs c's postStart hook, as kubelet before it starts the next
// container.
func (p *Pod) postStart(c *containerRun) error {
	if c.spec.Lifecycle == nil || c.spec.Lifecycle.PostStart == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	out, err := p.runHandler(ctx, c, c.spec.Lifecycle.PostStart)
	p.logHook(c, "postStart", out, err)
	if err != nil {
		return fmt.Errorf("%s.lifecycle.postStart: %w", c.field, err)
	}
	return nil
}

// logHook appends a hook's result and output to the container's log.
func (p *Pod) logHook(c *containerRun, hook, out string, err error) {
	result := "ok"
	if err != nil {
		result = "failed: " + err.Error()
	}
	f, ferr := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "=== harness: lifecycle.%s %s\n%s", hook, result, out)
}

// exec runs argv in the running container c (its namespaces, root, user
// and environment) until it ends or ctx is done, and returns its output.
func (p *Pod) exec(ctx context.Context, c *containerRun, argv []string) (string, error) {
	pid, err := p.pid(c)
	if err != nil {
		return "", err
	}
	spec := c.init
	spec.Join, spec.Mounts, spec.Argv = pid, nil, argv
	var out bytes.Buffer
	cmd, err := startInContainer(spec, &out, &out)
	if err != nil {
		return "", fmt.Errorf("%v in container %s: %w", argv, c.spec.Name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	if err != nil {
		return out.String(), fmt.Errorf("%v in container %s: %w: %s", argv, c.spec.Name, err, bytes.TrimSpace(out.Bytes()))
	}
	return out.String(), nil
}

// Exec runs command in container as kubectl exec does (the container's
// user, mounts, network and environment) and returns its output (standard
// output and error together); a failure or an exit code other than 0 is
// an error with the output.
func (p *Pod) Exec(ctx context.Context, container string, command ...string) (string, error) {
	c, err := p.container(container)
	if err != nil {
		return "", err
	}
	return p.exec(ctx, c, command)
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

// WaitReady waits until every container is ready and the Pod object's
// status says so (its Ready condition); it fails at once when a container
// has exited, and after timeout with the reasons of the containers not
// ready.
func (p *Pod) WaitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ready, err := p.readiness()
		if ready {
			return nil
		}
		if errors.Is(err, errExited) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pod %s/%s not ready after %s: %w", p.Namespace, p.Name, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// errExited marks a container that has ended.
var errExited = errors.New("exited")

// readiness reports whether every container is ready, and else why not.
func (p *Pod) readiness() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, c := range p.containers {
		switch s := c.state; {
		case !s.finished.IsZero():
			return false, fmt.Errorf("container %s %w with code %d; its log:\n%s", c.spec.Name, errExited, s.exitCode, tail(p.log(c), 40))
		case !s.ready:
			errs = append(errs, fmt.Errorf("container %s: %v", c.spec.Name, s.probeErr))
		}
	}
	if p.written < p.changes {
		errs = append(errs, errors.New("the status is not written yet"))
	}
	return len(errs) == 0 && p.initialized && !p.terminating, errors.Join(errs...)
}

// setReady records the result of c's readiness probe; only a change of
// readiness is written.
func (p *Pod) setReady(c *containerRun, ready bool, why error) {
	p.mu.Lock()
	same := c.state.ready == ready
	c.state.probeErr = why
	p.mu.Unlock()
	if !same {
		p.update(func() { c.state.ready = ready })
	}
}

func (p *Pod) isReady(c *containerRun) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return c.state.ready
}

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
// later calls return its result.
func (p *Pod) terminate(grace time.Duration) error {
	p.stopOnce.Do(func() {
		p.update(func() { p.terminating = true })
		p.startMu.Lock() // waits for a container being started
		p.startMu.Unlock()
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
			<-p.writerUp
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
