package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// RamjetOptions configure the Ramjet a test runs.
type RamjetOptions struct {
	// Args are more flags of ramjet-ingress run (--publish-address,
	// --watch-namespace, ...). Without --publish-address or
	// --publish-service the status is off (--no-status-update).
	Args []string
	// HTTPAddr and HTTPSAddr are ramjetd's listeners; empty picks free
	// loopback ports.
	HTTPAddr, HTTPSAddr string
	// Server is more of the base configuration's server section: YAML
	// lines indented by two spaces (such as "  access_log: true\n").
	Server string
}

// Ramjet is an ingress pod of Ramjet as the chart runs it: ramjetd and
// ramjet-ingress run as processes of their own, sharing a folder for
// ramjet.yaml and the generated files, and the admin socket; the controller
// watches the Cluster.
type Ramjet struct {
	// Dir holds ramjet.yaml, the generated files and the processes' logs.
	Dir, Config, AdminSocket string
	// HTTP and HTTPS are ramjetd's listeners, Health its health listener
	// and Controller the controller's /healthz, /readyz and /metrics, all
	// host:port on loopback.
	HTTP, HTTPS, Health, Controller string

	cluster *Cluster
	opts    RamjetOptions
	bin     string

	mu              sync.Mutex
	ramjetd, ingres *process
}

// ramjetCommands are the packages of Ramjet's programs.
var ramjetCommands = []string{"./cmd/ramjetd", "./cmd/ramjet-ingress"}

// ramjetBinaries builds ramjetd and ramjet-ingress once per test binary.
var ramjetBinaries = sync.OnceValues(func() (string, error) { return buildGo("", false, ramjetCommands...) })

// imageBinaries builds them as Ramjet's image holds them, once per test
// binary: static, so they run in a container's file system without a C
// library.
var imageBinaries = sync.OnceValues(func() (string, error) { return buildGo("image", true, ramjetCommands...) })

// buildGo builds the commands of pkgs (paths from the module's root) from
// the working tree into .cache/test-bin/sub (go build's cache makes it
// quick when nothing changed), static (CGO_ENABLED=0, -trimpath) when
// asked, under a lock, as test binaries of several packages run at once.
func buildGo(sub string, static bool, pkgs ...string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "test-bin", sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", err
	}
	args, env := []string{"build", "-o", dir + "/"}, os.Environ()
	if static {
		args, env = append(args, "-trimpath"), append(env, "CGO_ENABLED=0")
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir, cmd.Env = root, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return dir, nil
}

// StartRamjet builds ramjetd and ramjet-ingress (once per test binary),
// writes the base configuration and the first one (ramjet-ingress
// bootstrap), starts both, and waits until the controller is ready (its
// first configuration is loaded). Both stop when the test ends.
func StartRamjet(t testing.TB, c *Cluster, opts RamjetOptions) *Ramjet {
	t.Helper()
	dir, err := os.MkdirTemp("", "rj")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRamjet(c, dir, opts)
	t.Cleanup(func() {
		if t.Failed() && r != nil {
			t.Logf("ramjetd log:\n%s\nramjet-ingress log:\n%s", r.Log("ramjetd"), r.Log("ramjet-ingress"))
		}
		if r != nil {
			r.Close()
		}
		os.RemoveAll(dir)
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewRamjet is StartRamjet for callers without a testing.TB (a demo); dir
// should have a short path (the admin socket lives in it).
func NewRamjet(c *Cluster, dir string, opts RamjetOptions) (*Ramjet, error) {
	bin, err := ramjetBinaries()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	r := &Ramjet{
		Dir: dir, Config: filepath.Join(dir, "ramjet.yaml"), AdminSocket: filepath.Join(dir, "admin.sock"),
		HTTP: opts.HTTPAddr, HTTPS: opts.HTTPSAddr, Health: loopback(ports[2]), Controller: loopback(ports[3]),
		cluster: c, opts: opts, bin: bin,
	}
	if r.HTTP == "" {
		r.HTTP = loopback(ports[0])
	}
	if r.HTTPS == "" {
		r.HTTPS = loopback(ports[1])
	}
	if err := r.bootstrap(); err != nil {
		return r, err
	}
	if err := r.StartRamjetd(); err != nil {
		return r, err
	}
	return r, r.StartController()
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// bootstrap writes the base and, with ramjet-ingress bootstrap, the first
// configuration.
func (r *Ramjet) bootstrap() error {
	base := fmt.Sprintf(`server:
  listeners:
    http: {address: %q}
    https: {address: %q, tls: {}}
  health: {address: %q}
  admin: {socket: %q}
%s`, r.HTTP, r.HTTPS, r.Health, r.AdminSocket, r.opts.Server)
	if err := os.WriteFile(filepath.Join(r.Dir, "base.yaml"), []byte(base), 0o600); err != nil {
		return err
	}
	out, err := exec.Command(filepath.Join(r.bin, "ramjet-ingress"), "bootstrap", "--base", filepath.Join(r.Dir, "base.yaml"), "--out", r.Dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ramjet-ingress bootstrap: %w\n%s", err, out)
	}
	return nil
}

// StartRamjetd starts ramjetd on the current ramjet.yaml and waits until
// its health listener answers.
func (r *Ramjet) StartRamjetd() error {
	return r.start(&r.ramjetd, "ramjetd", "http://"+r.Health+"/healthz", 30*time.Second,
		"--config", r.Config, "--drain-delay", "0s", "--shutdown-timeout", "5s", "--log-level", "debug")
}

// StartController starts ramjet-ingress run and waits until it is ready:
// its caches synced and its first configuration loaded.
func (r *Ramjet) StartController() error {
	args := []string{"run", "--kubeconfig", r.cluster.Kubeconfig, "--base", filepath.Join(r.Dir, "base.yaml"),
		"--out", r.Dir, "--admin-socket", r.AdminSocket, "--listen", r.Controller,
		"--election-namespace", "default", "--log-level", "debug"}
	if !hasStatusFlag(r.opts.Args) {
		args = append(args, "--no-status-update")
	}
	args = append(args, r.opts.Args...)
	return r.start(&r.ingres, "ramjet-ingress", "http://"+r.Controller+"/readyz", 60*time.Second, args...)
}

// start runs the program name with args into *slot and waits until ready
// answers 200.
func (r *Ramjet) start(slot **process, name, ready string, timeout time.Duration, args ...string) error {
	p, err := startProcess(name, filepath.Join(r.bin, name), r.logPath(name), args...)
	if err != nil {
		return err
	}
	r.mu.Lock()
	*slot = p
	r.mu.Unlock()
	return p.waitReady(timeout, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, ready)
	})
}

func hasStatusFlag(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--publish-address") || strings.HasPrefix(a, "--publish-service") || strings.HasPrefix(a, "--no-status-update")
	})
}

// StopController stops ramjet-ingress (SIGTERM): ramjetd keeps serving.
func (r *Ramjet) StopController() { r.stop(&r.ingres) }

// KillController kills ramjet-ingress (SIGKILL), as a crash would.
func (r *Ramjet) KillController() {
	r.mu.Lock()
	p := r.ingres
	r.mu.Unlock()
	if p != nil && !p.exited() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// StopRamjetd stops ramjetd (SIGTERM).
func (r *Ramjet) StopRamjetd() { r.stop(&r.ramjetd) }

func (r *Ramjet) stop(p **process) {
	r.mu.Lock()
	proc := *p
	r.mu.Unlock()
	if proc != nil {
		proc.stop(10 * time.Second)
	}
}

// Close stops the controller, then ramjetd.
func (r *Ramjet) Close() {
	r.StopController()
	r.StopRamjetd()
}

// Log returns a process's log ("ramjetd" or "ramjet-ingress").
func (r *Ramjet) Log(name string) string {
	data, _ := os.ReadFile(r.logPath(name))
	return string(data)
}

func (r *Ramjet) logPath(name string) string { return filepath.Join(r.Dir, name+".log") }

// Client is an HTTP client that sends every request to ramjetd, whatever
// the URL's host (which becomes the Host header and the TLS server name),
// with the scheme choosing the listener; it trusts roots (nil for none:
// then the certificate is not verified) and does not follow redirects.
func (r *Ramjet) Client(roots *tls.Config) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			target := r.HTTP
			if port == "443" {
				target = r.HTTPS
			}
			return dialer.DialContext(ctx, network, target)
		},
		TLSClientConfig:   roots,
		DisableKeepAlives: true,
	}
	if roots == nil {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the tests read the certificate they got
	}
	return &http.Client{Transport: transport, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
