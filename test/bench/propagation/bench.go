package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// The objects of the benchmark live in one namespace; the routes share
// services Services, each with one backend answering its name.
const (
	namespace = "bench"
	services  = 4
	domain    = ".bench.test"
)

// bench is a running setup: the cluster, the backends and the ingress pod.
type bench struct {
	opts     options
	cluster  *harness.Cluster
	client   kubernetes.Interface
	network  *harness.Network
	ramjet   *harness.Ramjet
	admin    *admin.Client
	http     *http.Client
	progress func(format string, args ...any)

	loaded int // routes r0 .. r<loaded-1> exist
	roll   rollState
	upd    updState
}

// results is everything measured, for the report.
type results struct {
	machine machine
	opts    options
	start   time.Time
	cpu     cpuTimes // at the start, for the CPU use of the run
	sizes   []sizeResult
	steps   []stepResult
}

// sizeResult is what one size of -sizes measured.
type sizeResult struct {
	routes    int // Ingresses of the load (the measured ones come and go)
	ingresses int // Ingresses served when measuring (routes + the fixed ones)
	rejected  int
	load      loadResult
	series    []*series
	rollouts  []rollout
	memory    memory
	rebuilds  []rebuild // of the measurements (not the load)
	publish   histogram // ramjet_ingress_publish_latency_seconds during the measurements
	cpu       usage     // during the measurements
	costs     costs
}

// run sets everything up, measures every size and returns the report; the
// setup is torn down before it returns.
func run(ctx context.Context, opts options) (string, error) {
	res := &results{machine: readMachine(), opts: opts, start: time.Now(), cpu: readCPU()}
	b, cleanup, err := setup(ctx, opts)
	if err != nil {
		cleanup()
		return "", err
	}
	for _, size := range opts.sizes {
		r, err := b.measureSize(ctx, size)
		if r != nil {
			res.sizes = append(res.sizes, *r)
		}
		if err != nil {
			b.keepLogs()
			cleanup()
			return res.markdown(time.Now()), fmt.Errorf("at %d routes: %w", size, err)
		}
	}
	b.keepLogs()
	cleanup()
	if opts.steps {
		// With the cluster stopped: the machine is quieter.
		res.steps, err = benchmarkSteps(opts.sizes, b.progress)
	}
	return res.markdown(time.Now()), err
}

// keepLogs copies the logs of the controller and ramjetd into -logs.
func (b *bench) keepLogs() {
	if b.opts.logs == "" {
		return
	}
	if err := os.MkdirAll(b.opts.logs, 0o755); err != nil {
		b.progress("keeping the logs: %v", err)
		return
	}
	for _, name := range []string{"ramjet-ingress", "ramjetd"} {
		if err := os.WriteFile(filepath.Join(b.opts.logs, name+".log"), []byte(b.ramjet.Log(name)), 0o644); err != nil {
			b.progress("keeping the logs: %v", err)
		}
	}
}

// setup starts the cluster, the network with its backends and the ingress
// pod, and creates the fixed objects.
func setup(ctx context.Context, opts options) (*bench, func(), error) {
	b := &bench{opts: opts, progress: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}}
	var undo []func()
	cleanup := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	dir, err := os.MkdirTemp("", "rjbench")
	if err != nil {
		return nil, cleanup, err
	}
	undo = append(undo, func() { os.RemoveAll(dir) })

	b.progress("starting etcd and kube-apiserver")
	if b.cluster, err = harness.NewCluster(dir); err != nil {
		return nil, cleanup, err
	}
	undo = append(undo, b.cluster.Close)
	b.client = b.cluster.Client

	if b.network, err = harness.CreateNetwork(); err != nil {
		return nil, cleanup, err
	}
	undo = append(undo, func() { _ = b.network.Close() })
	if err := b.createFixed(ctx); err != nil {
		return nil, cleanup, err
	}

	b.progress("building and starting ramjetd and ramjet-ingress run")
	rdir, err := os.MkdirTemp("", "rj")
	if err != nil {
		return nil, cleanup, err
	}
	undo = append(undo, func() { os.RemoveAll(rdir) })
	// JSON logs: the rebuilds' timings are read from them.
	args := append([]string{"--log-format", "json"}, opts.controllerArgs...)
	b.ramjet, err = harness.NewRamjet(b.cluster, rdir, harness.RamjetOptions{Args: args})
	if b.ramjet != nil {
		undo = append(undo, b.ramjet.Close)
	}
	if err != nil {
		return nil, cleanup, err
	}
	b.admin = admin.NewClient(b.ramjet.AdminSocket)
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	b.http = &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, b.ramjet.HTTP)
			},
			MaxIdleConnsPerHost: 4,
		},
		Timeout:       2 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if err := b.waitFixed(ctx); err != nil {
		return nil, cleanup, fmt.Errorf("%w\ncontroller log (end):\n%s", err, tail(b.ramjet.Log("ramjet-ingress"), 20))
	}
	return b, cleanup, nil
}

// createFixed creates the namespace, the IngressClass, the shared Services
// with their backends, the Ingress the update series changes and the rolled
// Service with its Ingress.
func (b *bench) createFixed(ctx context.Context) error {
	if _, err := b.client.CoreV1().Namespaces().Create(ctx, harness.Namespace(namespace), metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := b.client.NetworkingV1().IngressClasses().Create(ctx, ingressClass(), metav1.CreateOptions{}); err != nil {
		return err
	}
	for i := range services {
		backend, err := b.network.Serve(backendName(i), nil, nil)
		if err != nil {
			return err
		}
		name := serviceName(i)
		if _, err := b.client.CoreV1().Services(namespace).Create(ctx, harness.Service(namespace, name, 80, harness.BackendPort), metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := b.client.DiscoveryV1().EndpointSlices(namespace).Create(ctx, harness.EndpointSlice(namespace, name, harness.BackendPort, backend.IP), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if err := b.createUpdated(ctx); err != nil {
		return err
	}
	return b.createRolled(ctx)
}

// waitFixed waits until ramjetd serves the fixed objects.
func (b *bench) waitFixed(ctx context.Context) error {
	if _, err := b.waitAnswer(ctx, updHost, backendName(0), time.Minute); err != nil {
		return fmt.Errorf("the updated Ingress is not served: %w", err)
	}
	return b.findRollPool(ctx)
}

func serviceName(i int) string { return fmt.Sprintf("svc-%d", i) }
func backendName(i int) string { return fmt.Sprintf("b%d", i) }
