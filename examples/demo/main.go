// Command demo is `make demo`: Ramjet doing its job on one machine, as an
// ingress pod of a Kubernetes cluster would.
//
// It builds what it needs into .cache/bin (ramjetd, ramjet-ingress and
// democert, then etcd, kube-apiserver, kubectl and helm with
// test/tools/build.sh: about ten minutes the first time on two cores,
// skipped afterwards), starts a local API server with its etcd (no nodes:
// the demo writes the EndpointSlices itself), example backends in a network
// namespace (198.18.0.0/15 addresses, which EndpointSlices accept), installs
// the chart charts/ramjet with helm and runs the pod of its Deployment as a
// kubelet would (test/harness's pod runner: the init container, ramjetd and
// the controller as user 65532 with the chart's volumes, in a network
// namespace of its own), and applies examples/ingress: a host with TLS (the
// Secret shop-tls, from a demo CA made for the run), path routing, a
// rewrite, a canary, basic authentication and an Ingress Ramjet refuses.
// The demo plays the cloud's load balancer of the chart's Service: it
// forwards 127.0.0.1:8080 and :8443 to the pod's listeners and writes
// 127.0.0.1 into the Service's status. Once every behaviour answers as the
// printed commands say (checked), it prints the curl and kubectl commands
// to try and runs until Ctrl-C, then stops the pod and every process and
// removes the network namespaces and its run folder, also after a failure.
//
// It needs root (for the network namespace) and iproute2, and installs
// iproute2 and curl with apt-get when they are missing. The load balancer
// listens on 127.0.0.1:8080 (HTTP) and 127.0.0.1:8443 (HTTPS); the environment
// variables RAMJET_DEMO_HTTP_PORT and RAMJET_DEMO_HTTPS_PORT change the
// ports. RAMJET_DEMO_KEEP=1 keeps the run folder (logs, configuration) at
// the end. RAMJET_TEST_BIN, as for the tests, names another folder for
// etcd, kube-apiserver, kubectl and helm.
//
// `make demo-ramjetd` is the older demo of ramjetd alone, without
// Kubernetes (examples/ramjetd/demo.sh).
package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// modulePath is the module whose root the demo runs in.
const modulePath = "github.com/ramjet-dev/ramjet"

// Timeouts of the demo's waits.
const (
	servedTimeout = 90 * time.Second // from the first apply to every check passing
	watchEvery    = 2 * time.Second  // health checks of ramjetd and the controller while running
)

// demo is one run and everything it started, for the cleanup.
type demo struct {
	p         *progress
	root, bin string // the module's root and .cache/bin
	tools     string // etcd, kube-apiserver and kubectl: $RAMJET_TEST_BIN, else bin
	run       string // the run folder
	httpPort  int
	httpsPort int

	cluster   *harness.Cluster
	network   *harness.Network
	backends  map[string]*harness.Backend
	pod       *harness.Pod
	balancers []*balancer
	ca        *x509.CertPool
	caFile    string
	event     refusedEvent
}

func main() {
	os.Exit(run())
}

// run returns the exit status: 0 after Ctrl-C once the demo was ready, 130
// after Ctrl-C before, 1 after a failure.
func run() int {
	d := &demo{p: newProgress()}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		return 1
	}
	var err error
	if d.httpPort, err = portFromEnv("RAMJET_DEMO_HTTP_PORT", 8080); err != nil {
		return fail(err)
	}
	if d.httpsPort, err = portFromEnv("RAMJET_DEMO_HTTPS_PORT", 8443); err != nil {
		return fail(err)
	}
	if d.httpPort == d.httpsPort {
		return fail(fmt.Errorf("RAMJET_DEMO_HTTP_PORT and RAMJET_DEMO_HTTPS_PORT are both %d; they must differ", d.httpPort))
	}
	if d.root, err = moduleRoot(); err != nil {
		return fail(err)
	}
	// The harness finds .cache/bin and builds from the working directory.
	if err := os.Chdir(d.root); err != nil {
		return fail(err)
	}
	d.bin = filepath.Join(d.root, ".cache", "bin")
	d.tools = d.bin
	if dir := os.Getenv("RAMJET_TEST_BIN"); dir != "" { // the harness looks there
		d.tools = dir
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		d.p.printf("\n%s interrupted: stopping everything (Ctrl-C again to quit at once)\n", d.p.bold("==>"))
		cancel()
		<-signals
		// The started processes die with this one (they have a parent-death
		// signal); the harness removes a network namespace left behind the
		// next time it runs.
		fmt.Fprintln(os.Stderr, "demo: quitting without cleaning up; its run folder /tmp/ramjet-demo-* stays")
		os.Exit(130)
	}()

	defer d.cleanup()
	if err := d.start(ctx); err != nil {
		if ctx.Err() != nil {
			return 130
		}
		d.logTails()
		fmt.Fprintf(os.Stderr, "\ndemo: %v\n", err)
		return 1
	}
	d.printCommands()
	if err := d.watch(ctx); err != nil {
		d.logTails()
		fmt.Fprintf(os.Stderr, "\ndemo: %v\n", err)
		return 1
	}
	return 0
}

// start does every step up to the printed commands.
func (d *demo) start(ctx context.Context) error {
	steps := []func(context.Context) error{
		d.prerequisites, d.buildRamjet, d.buildTools, d.startCluster,
		d.startBackends, d.startRamjet, d.apply, d.waitServed,
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := step(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// prerequisites checks root, the ports and the commands the demo needs,
// installing iproute2 and curl with apt-get when they are missing, and
// makes the run folder.
func (d *demo) prerequisites(ctx context.Context) error {
	return d.p.step("checking what the demo needs", "", func(note func(string)) error {
		if os.Geteuid() != 0 {
			return errors.New("the demo needs root: its backends run in a network namespace (EndpointSlices refuse " +
				"loopback addresses); run it as root, e.g. sudo make demo")
		}
		for _, port := range []struct {
			env  string
			port int
		}{{"RAMJET_DEMO_HTTP_PORT", d.httpPort}, {"RAMJET_DEMO_HTTPS_PORT", d.httpsPort}} {
			if err := portFree(port.env, port.port); err != nil {
				return err
			}
		}
		if _, err := exec.LookPath("go"); err != nil {
			// sudo often drops /usr/local/go/bin from PATH; the harness
			// runs go build too.
			if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
				return errors.New("go is not installed or not in PATH; the demo builds Ramjet with Go 1.26 (https://go.dev/dl/)")
			}
			os.Setenv("PATH", os.Getenv("PATH")+":/usr/local/go/bin")
		}
		var missing []string
		for cmd, pkg := range map[string]string{"ip": "iproute2", "curl": "curl"} {
			if _, err := exec.LookPath(cmd); err != nil {
				missing = append(missing, pkg)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			if _, err := exec.LookPath("apt-get"); err != nil {
				return fmt.Errorf("the demo needs %s: install it with your package manager", strings.Join(missing, " and "))
			}
			note("installing " + strings.Join(missing, " and ") + " with apt-get")
			os.Setenv("DEBIAN_FRONTEND", "noninteractive")
			if err := runCommand(ctx, note, "", "apt-get", "update", "-qq"); err != nil {
				return err
			}
			if err := runCommand(ctx, note, "", "apt-get", append([]string{"install", "-y", "-qq"}, missing...)...); err != nil {
				return err
			}
		}
		// A short folder: the admin socket lives in it (a unix socket's
		// path has at most 107 bytes).
		parent := os.TempDir()
		if len(parent) > 40 {
			parent = "/tmp"
		}
		var err error
		if d.run, err = os.MkdirTemp(parent, "ramjet-demo-"); err != nil {
			return err
		}
		for _, sub := range []string{"cluster", "pod", "certs", "tmp"} {
			if err := os.Mkdir(filepath.Join(d.run, sub), 0o700); err != nil {
				return err
			}
		}
		note("run folder (logs, configuration, kubeconfig): " + d.run)
		return nil
	})
}

// buildRamjet builds ramjetd, ramjet-ingress and democert into .cache/bin.
func (d *demo) buildRamjet(ctx context.Context) error {
	return d.p.step("building ramjetd, ramjet-ingress and democert into .cache/bin",
		"the first build takes a minute or two", func(note func(string)) error {
			if err := os.MkdirAll(d.bin, 0o755); err != nil {
				return err
			}
			return runCommand(ctx, note, d.root, "go", "build", "-o", d.bin+"/",
				"./cmd/ramjetd", "./cmd/ramjet-ingress", "./examples/democert")
		})
}

// buildTools runs test/tools/build.sh, which builds etcd, kube-apiserver,
// kubectl and helm when they are missing or out of date.
func (d *demo) buildTools(ctx context.Context) error {
	var missing []string
	for _, b := range []string{"etcd", "kube-apiserver", "kubectl", "helm"} {
		if _, err := os.Stat(filepath.Join(d.tools, b)); err != nil {
			missing = append(missing, b)
		}
	}
	rel := d.tools
	if r, err := filepath.Rel(d.root, d.tools); err == nil && !strings.HasPrefix(r, "..") {
		rel = r
	}
	title := "checking etcd, kube-apiserver, kubectl and helm in " + rel + " (test/tools/build.sh)"
	if len(missing) > 0 {
		title = "building " + strings.Join(missing, ", ") + " into " + rel + " with test/tools/build.sh"
		if slices.Contains(missing, "kube-apiserver") {
			title += " (about ten minutes on two cores, once: then they are cached)"
		}
	}
	// The live line says what build.sh builds and how long it may take.
	return d.p.step(title, "", func(note func(string)) error {
		return runCommand(ctx, note, d.root, "sh", filepath.Join(d.root, "test", "tools", "build.sh"), d.tools)
	})
}

// startCluster starts etcd and kube-apiserver.
func (d *demo) startCluster(context.Context) error {
	return d.p.step("starting a local Kubernetes API server (etcd and kube-apiserver; no nodes)",
		"a few seconds", func(note func(string)) error {
			c, err := harness.NewCluster(filepath.Join(d.run, "cluster"))
			if err != nil {
				return err
			}
			d.cluster = c
			note("API server " + c.URL + ", kubeconfig " + c.Kubeconfig)
			return nil
		})
}

// startBackends creates the network namespace and its backends.
func (d *demo) startBackends(context.Context) error {
	return d.p.step("starting the example backends in a network namespace", "", func(note func(string)) error {
		n, err := harness.CreateNetwork()
		if err != nil {
			return err
		}
		d.network = n
		f, err := os.OpenFile(filepath.Join(d.run, "backends.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		// Closed with the process: the backends log until Network.Close.
		logger := log.New(f, "", log.LstdFlags|log.Lmicroseconds)
		if d.backends, err = startBackends(n, logger); err != nil {
			return err
		}
		note(fmt.Sprintf("namespace %s, %s; the host reaches it as %s", n.Name, n.Prefix, n.HostIP))
		for _, svc := range services() {
			note(fmt.Sprintf("Service %-7s %s", svc+":", members(d.backends, svc, false)))
		}
		note("spare pod of web, outside its EndpointSlice until you add it: " + members(d.backends, "web", true))
		return nil
	})
}

// manifests are the YAML files of examples/ingress, in the order kubectl
// applies a folder.
func (d *demo) manifests() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(d.root, "examples", "ingress", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("examples/ingress has no YAML file")
	}
	slices.Sort(files)
	return files, nil
}

// hasIngress matches a manifest that holds an Ingress.
var hasIngress = regexp.MustCompile(`(?m)^kind:\s*Ingress\s*$`)

// apply applies examples/ingress file by file; before the first file with
// an Ingress it creates the Secret shop-tls and the EndpointSlices, so the
// Ingresses find what they name at once.
func (d *demo) apply(ctx context.Context) error {
	return d.p.step("applying examples/ingress (kubectl apply), the Secret shop-tls and the EndpointSlices", "",
		func(note func(string)) error {
			files, err := d.manifests()
			if err != nil {
				return err
			}
			created := false
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				if !created && hasIngress.Match(data) {
					if err := d.createObjects(ctx, note); err != nil {
						return err
					}
					created = true
				}
				rel, _ := filepath.Rel(d.root, f)
				out, err := d.cluster.RunKubectl("", "apply", "-f", f)
				if err != nil {
					return err
				}
				for line := range strings.Lines(strings.TrimSpace(out)) {
					note(strings.TrimSpace(line) + "  (" + rel + ")")
				}
			}
			if !created {
				return errors.New("examples/ingress has no Ingress")
			}
			return nil
		})
}

// createObjects makes the demo CA and the certificate of shop.demo.test,
// and creates the Secret shop-tls and the EndpointSlices.
func (d *demo) createObjects(ctx context.Context, note func(string)) error {
	certs := filepath.Join(d.run, "certs")
	if err := runCommand(ctx, note, "", filepath.Join(d.bin, "democert"), "--out", certs, "--hosts", "shop.demo.test"); err != nil {
		return err
	}
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(certs, name)) }
	caPEM, err := read("ca.crt")
	if err != nil {
		return err
	}
	d.caFile = filepath.Join(certs, "ca.crt")
	d.ca = x509.NewCertPool()
	if !d.ca.AppendCertsFromPEM(caPEM) {
		return errors.New("democert wrote no CA certificate")
	}
	crt, err := read("demo.crt")
	if err != nil {
		return err
	}
	key, err := read("demo.key")
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "shop-tls"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
	}
	if _, err := d.cluster.Client.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the Secret shop-tls: %w", err)
	}
	note("secret/shop-tls created (certificate of shop.demo.test signed by the demo CA " + d.caFile + ")")
	for _, s := range endpointSlices(d.backends) {
		if _, err := d.cluster.Client.DiscoveryV1().EndpointSlices(namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating the EndpointSlice %s: %w", s.Name, err)
		}
		note("endpointslice.discovery.k8s.io/" + s.Name + " created: " + members(d.backends, s.Name, false))
	}
	return nil
}

// waitServed waits until every check passes.
func (d *demo) waitServed(ctx context.Context) error {
	list := checks(newProber(loopback(d.httpPort), loopback(d.httpsPort), d.ca), d.cluster.Client, &d.event)
	return d.p.step("waiting until Ramjet serves every host as the commands below say", "", func(note func(string)) error {
		start := time.Now()
		err := waitChecks(ctx, list, servedTimeout, func(passed int) {
			d.p.setStatus(fmt.Sprintf("    … %s, %d of %d checks pass", round(time.Since(start)), passed, len(list)))
		})
		if err != nil {
			return err
		}
		for _, c := range list {
			note("ok: " + c.name)
		}
		return nil
	})
}

// watch runs until ctx ends, or until ramjetd or the controller stops
// answering its health check three times in a row.
func (d *demo) watch(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	failures := map[string]int{}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchEvery):
		}
		for name, addr := range map[string]string{"ramjetd": d.ramjetdAddr(), "ramjet-ingress": d.controllerAddr()} {
			resp, err := client.Get("http://" + addr + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = errors.New(resp.Status)
				}
			}
			if err == nil || ctx.Err() != nil {
				failures[name] = 0
				continue
			}
			if failures[name]++; failures[name] == 3 {
				return fmt.Errorf("%s stopped answering its health check (%v); stopping the demo", name, err)
			}
		}
	}
}

// cleanup stops what the demo started and removes its run folder (kept
// with RAMJET_DEMO_KEEP=1).
func (d *demo) cleanup() {
	if d.run == "" {
		return
	}
	_ = d.p.step("stopping the demo", "", func(note func(string)) error {
		for _, b := range d.balancers {
			_ = b.Close()
		}
		if d.pod != nil {
			if err := d.pod.Delete(); err != nil {
				note("warning: " + err.Error())
			} else {
				note("stopped the pod (preStop drain, then SIGTERM): ramjetd and the controller")
			}
		}
		if d.network != nil {
			if err := d.network.Close(); err != nil {
				note("warning: " + err.Error())
			} else {
				note("stopped the backends and removed the network namespace " + d.network.Name)
			}
		}
		if d.cluster != nil {
			d.cluster.Close()
			note("stopped kube-apiserver and etcd")
		}
		if os.Getenv("RAMJET_DEMO_KEEP") == "1" {
			note("kept the run folder " + d.run + " (RAMJET_DEMO_KEEP=1)")
			return nil
		}
		if err := os.RemoveAll(d.run); err != nil {
			note("warning: " + err.Error())
		} else {
			note("removed the run folder " + d.run)
		}
		return nil
	})
}

// logTails writes the last lines of the logs of what was started, after a
// failure.
func (d *demo) logTails() {
	if d.run == "" {
		return
	}
	if d.pod == nil {
		return
	}
	for _, name := range []string{"ramjetd", "controller"} {
		data, err := os.ReadFile(d.pod.LogPath(name))
		if err != nil || len(data) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(os.Stderr, "\n--- the last lines of %s:\n%s\n", name, strings.Join(lines, "\n"))
	}
	if os.Getenv("RAMJET_DEMO_KEEP") != "1" {
		fmt.Fprintln(os.Stderr, "\n(the run folder is removed at the end; RAMJET_DEMO_KEEP=1 make demo keeps it)")
	}
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// portFromEnv reads a port number from the environment variable env.
func portFromEnv(env string, def int) (int, error) {
	v := os.Getenv(env)
	if v == "" {
		return def, nil
	}
	port, err := strconv.Atoi(v)
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("%s=%s is not a port number (1..65535)", env, v)
	}
	return port, nil
}

// portFree fails when something listens on 127.0.0.1:port, saying how to
// pick another port.
func portFree(env string, port int) error {
	l, err := net.Listen("tcp", loopback(port))
	if err != nil {
		other := port + 10000
		if other > 65535 {
			other = port - 10000
		}
		return fmt.Errorf("port %d on 127.0.0.1 is taken (see: ss -ltnp 'sport = :%d'); stop what uses it or pick another port, "+
			"for example: %s=%d make demo", port, port, env, other)
	}
	return l.Close()
}

// moduleRoot walks up from the working directory to the folder whose
// go.mod declares modulePath.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && regexp.MustCompile(`(?m)^module\s+"?`+regexp.QuoteMeta(modulePath)+`"?\s*$`).Match(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the demo from a clone of Ramjet (make demo): no go.mod of " + modulePath + " above the working directory")
		}
		dir = parent
	}
}
