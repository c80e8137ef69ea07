package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/logging"
	"github.com/ramjet-dev/ramjet/sources/controller"
	"github.com/ramjet-dev/ramjet/sources/kube"
	"github.com/ramjet-dev/ramjet/sources/publish"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// ConfigName is the name of ramjet.yaml in --out.
const ConfigName = "ramjet.yaml"

// runFlags are the flags of `ramjet-ingress run` beyond translation's.
type runFlags struct {
	translationFlags
	out, adminSocket, kubeconfig, namespace        string
	publishAddress, electionID                     string
	electionNamespace, listen, logLevel, logFormat string
	noStatus                                       bool
	debounce, resync, retry                        time.Duration
	publish                                        controller.Publish
}

func (f *runFlags) register(fs *pflag.FlagSet) {
	f.translationFlags.register(fs)
	_ = fs.MarkHidden("file-dir") // --out is where the files go
	fs.StringVar(&f.out, "out", "", "directory of ramjet.yaml and the generated files, shared with ramjetd (required)")
	fs.StringVar(&f.adminSocket, "admin-socket", "", "admin socket of the ramjetd of this pod (required)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; empty: the pod's service account (in-cluster)")
	fs.StringVar(&f.namespace, "watch-namespace", "", "watch only this namespace (IngressClasses stay cluster-wide); empty: all")
	fs.StringVar(&f.publishService, "publish-service", "", "namespace/name of the Service whose address goes into the Ingresses' status")
	fs.StringVar(&f.publishAddress, "publish-address", "", "comma-separated IP addresses or host names for the Ingresses' status, instead of --publish-service")
	fs.BoolVar(&f.noStatus, "no-status-update", false, "never write the Ingresses' status")
	fs.StringVar(&f.electionID, "election-id", "ramjet-ingress-leader", "name of the leader election Lease")
	fs.StringVar(&f.electionNamespace, "election-namespace", envOr("POD_NAMESPACE", "default"), "namespace of the Lease ($POD_NAMESPACE when set)")
	fs.StringVar(&f.listen, "listen", ":10254", "address of /healthz, /readyz and /metrics")
	fs.DurationVar(&f.debounce, "debounce", 200*time.Millisecond, "a lone change is published at once; a burst is coalesced into at most one more rebuild per window")
	fs.DurationVar(&f.resync, "resync", 30*time.Second, "interval at which every pool's members are sent again")
	fs.DurationVar(&f.retry, "retry", 60*time.Second, "interval at which a configuration ramjetd refused is tried again")
	fs.StringVar(&f.logLevel, "log-level", logging.DefaultLevel(), "debug, info, warn or error (or RAMJET_LOG)")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json")
}

// check refuses bad values at start, naming the flag.
func (f *runFlags) check() error {
	switch {
	case f.base == "":
		return errors.New("--base is required: the base configuration (listeners, health, admin socket)")
	case f.out == "":
		return errors.New("--out is required: the directory shared with ramjetd")
	case f.adminSocket == "":
		return errors.New("--admin-socket is required: the admin socket of the ramjetd in this pod")
	case f.debounce < 0 || f.resync <= 0 || f.retry <= 0:
		return errors.New("--debounce must be 0 or more, --resync and --retry above 0")
	case f.noStatus || !f.ingress:
		return nil
	}
	var err error
	f.publish, err = controller.ParsePublish(f.publishService, f.publishAddress)
	return err
}

func run(args []string) error {
	fs := pflag.NewFlagSet("ramjet-ingress run", pflag.ContinueOnError)
	var f runFlags
	f.register(fs)
	fs.Usage = usage(fs, "ramjet-ingress run --base FILE --out DIR --admin-socket SOCKET [flags]",
		"The controller: watches IngressClasses, Ingresses, Services, EndpointSlices and the Secrets and ConfigMaps\nthey name, "+
			"writes ramjet.yaml and its files into --out, reloads the ramjetd of this pod through --admin-socket\n"+
			"and sends it pool members. See docs/controller.md.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	f.fileDir = f.out
	opts, base, err := f.options()
	if err != nil {
		return err
	}
	log, err := logging.New(f.logLevel, f.logFormat, os.Stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	// client-go's own messages (a watch the API server refuses, such as an
	// RBAC error, and leader election) go to the same log, in its format.
	klog.SetSlogLogger(log)
	restConfig, client, err := kubeClient(f.kubeconfig)
	if err != nil {
		return err
	}
	publisher, err := publish.New(publish.Options{Dir: f.out, ConfigName: ConfigName, Admin: admin.NewClient(f.adminSocket), Log: log})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	watch, err := kube.NewForConfig(restConfig, kube.Options{Kinds: opts.Kinds(), Namespace: f.namespace, References: opts.References,
		ExtraSecrets: extraSecrets(f.defaultCert), Log: log})
	if err != nil {
		return err
	}
	metrics := controller.NewMetrics()
	reporters, err := f.reporters(ctx, restConfig, client, log)
	if err != nil {
		return err
	}
	c := controller.New(controller.Options{Translate: opts, Base: base, Debounce: f.debounce, Resync: f.resync, Retry: f.retry, Log: log},
		watch, publisher, metrics, reporters...)

	errs := make(chan error, 2)
	var loops sync.WaitGroup
	go func() { errs <- controller.Serve(ctx, f.listen, c.Ready, metrics.Registry, log) }()
	go watch.Start(ctx)
	loops.Go(func() { controller.Elect(ctx, client, f.electionNamespace, f.electionID, identity(), c.SetLeader, log) })
	loops.Go(func() { errs <- c.Run(ctx) })
	log.Info("ramjet-ingress started", "out", f.out, "admin socket", f.adminSocket, "namespace", orAll(f.namespace), "listen", f.listen)
	select {
	case err = <-errs:
	case <-ctx.Done():
		log.Info("stopping; the Lease is released and ramjetd keeps serving its configuration")
	}
	stop()
	// The loop finishes a publication it started (so no file is left that
	// ramjetd was not asked to load) and the election releases the Lease.
	if !waitFor(&loops, shutdownWait) {
		log.Warn("stopped before the loop finished", "waited", shutdownWait)
	}
	return err
}

// shutdownWait bounds how long a stopping controller waits for its loop and
// the Lease release.
const shutdownWait = 20 * time.Second

// waitFor waits for wg at most d and reports whether it finished.
func waitFor(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// reporters are what the leader reports: Events always, status unless
// turned off.
func (f *runFlags) reporters(ctx context.Context, restConfig *rest.Config, client kubernetes.Interface, log *slog.Logger) ([]controller.Reporter, error) {
	events, err := controller.NewEvents(ctx, client)
	if err != nil {
		return nil, err
	}
	out := []controller.Reporter{events}
	if !f.noStatus && f.ingress {
		out = append(out, controller.NewStatus(client, f.publish, log))
	}
	if f.gatewayAPI {
		gateways, err := gatewayclient.NewForConfig(restConfig)
		if err != nil {
			return nil, err
		}
		if f.gatewayServices != nil {
			out = append(out, controller.NewGatewayServices(client, *f.gatewayServices, log))
		}
		if !f.noStatus {
			status := controller.NewGatewayStatus(gateways, gatewayv1.GatewayController(f.gateway.controllerName), log)
			status.Services = f.gatewayServices
			out = append(out, status)
		}
	}
	return out, nil
}

func extraSecrets(defaultCert string) []snapshot.Key {
	if key, ok := snapshot.ParseKey(defaultCert); ok {
		return []snapshot.Key{key}
	}
	return nil
}

// kubeClient connects with a kubeconfig, or in the cluster.
func kubeClient(kubeconfig string) (*rest.Config, kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the API server (give --kubeconfig outside a cluster): %w", err)
	}
	cfg.UserAgent = "ramjet-ingress"
	// Status writes go one per Ingress: client-go's default of 5 requests
	// a second would take minutes on a large cluster.
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	return cfg, client, err
}

// identity names this replica in the Lease: the pod's name, else the host
// name, with a random suffix so two processes on one host differ.
func identity() string {
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return name + "_" + hex.EncodeToString(suffix)
}

func bootstrap(args []string) error {
	fs := pflag.NewFlagSet("ramjet-ingress bootstrap", pflag.ContinueOnError)
	fs.Usage = usage(fs, "ramjet-ingress bootstrap --base FILE --out DIR",
		"Writes the first ramjet.yaml (the base's listeners, no applications: every request answers 404),\n"+
			"for ramjetd to start with before the controller's first configuration.")
	var f translationFlags
	fs.StringVar(&f.base, "base", "", "base configuration (listeners, health, admin socket) (required)")
	out := fs.String("out", "", "directory to write ramjet.yaml into (required)")
	fs.StringVar(&f.httpsListener, "https-listener", "https", "name of the base's listener that serves HTTPS")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.base == "" || *out == "" {
		return errors.New("bootstrap: --base and --out are required")
	}
	base, err := f.loadBase()
	if err != nil {
		return err
	}
	if l := base.Listeners[f.httpsListener]; l == nil || l.TLS == nil {
		return fmt.Errorf("--https-listener %q: the base has no such TLS listener", f.httpsListener)
	}
	if err := publish.Bootstrap(base, *out, ConfigName); err != nil {
		return err
	}
	fmt.Println("wrote", filepath.Join(*out, ConfigName))
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func orAll(namespace string) string {
	if namespace == "" {
		return "all"
	}
	return namespace
}

// usage prints a command's synopsis, what it does and its flags.
func usage(fs *pflag.FlagSet, synopsis, doc string) func() {
	return func() {
		fmt.Fprintf(os.Stderr, "usage: %s\n\n%s\n\nflags:\n%s", synopsis, doc, fs.FlagUsages())
	}
}
