package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ServiceCIDR is the range the API server allocates Services' cluster IPs
// from.
const ServiceCIDR = "10.96.0.0/16"

// Timeouts of the harness's waits.
const (
	startTimeout = 90 * time.Second // etcd or the API server becoming ready
	stopGrace    = 15 * time.Second // SIGTERM to SIGKILL
	// apiStopGrace is shorter: kube-apiserver waits for open watches before
	// it ends, which only slows tests down (they stop it to see clients
	// survive an outage, not to test its shutdown).
	apiStopGrace = 2 * time.Second
)

// Cluster is an etcd and a kube-apiserver on loopback ports, with an admin
// credential. There is no controller-manager, scheduler or kubelet: objects
// are stored and served, nothing acts on them (tests create EndpointSlices
// themselves; deleted namespaces stay Terminating).
type Cluster struct {
	// Config is an admin client configuration (client certificate of a
	// member of system:masters; rate limit raised to 1000 QPS). Use
	// rest.CopyConfig before changing it.
	Config *rest.Config
	// Client is a clientset built from Config.
	Client kubernetes.Interface
	// Kubeconfig is the path of a kubeconfig file with the same credential,
	// for kubectl and `ramjet-ingress --kubeconfig`.
	Kubeconfig string
	// URL is the API server's address, https://127.0.0.1:PORT. It stays the
	// same across Stop and Start.
	URL string
	// Dir is the cluster's temporary folder: credentials, etcd's data and
	// the logs (etcd.log, kube-apiserver.log).
	Dir string

	bin    string
	opts   options
	https  *http.Client // for /readyz
	etcd   *process
	mu     sync.Mutex // guards api
	api    *process
	apiCmd []string // kube-apiserver's arguments, reused by Start
}

// Option changes how StartAPIServer sets up the cluster.
type Option func(*options)

type options struct {
	crdDirs  []string
	apiFlags []string
}

// WithCRDs installs the CustomResourceDefinitions found in the YAML files
// of dir (and its subfolders; other kinds of objects are ignored) and waits
// until they are Established. It may be given several times.
func WithCRDs(dir string) Option {
	return func(o *options) { o.crdDirs = append(o.crdDirs, dir) }
}

// WithAPIServerFlags adds flags to kube-apiserver's command line, after the
// harness's own (a later flag wins), e.g. "--feature-gates=...".
func WithAPIServerFlags(flags ...string) Option {
	return func(o *options) { o.apiFlags = append(o.apiFlags, flags...) }
}

// StartAPIServer starts etcd and kube-apiserver for t, waits until the API
// server is ready and the default namespace exists, and installs the CRDs
// of the options. Everything is stopped and removed when t ends (the last
// lines of both logs are written to t's log when t failed); a failure to
// start fails t.
func StartAPIServer(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	c, err := NewCluster(t.TempDir(), opts...)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.logTails(t)
		}
		c.Close()
	})
	return c
}

// NewCluster is StartAPIServer for a caller without a testing.TB (a
// TestMain, a demo program): it keeps its files in dir, which must exist,
// and the caller must call Close. On error nothing is left running.
func NewCluster(dir string, opts ...Option) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin}
	for _, o := range opts {
		o(&c.opts)
	}
	if err := c.init(); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		err = c.launch()
		if err == nil {
			break
		}
		c.Close()
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return nil, fmt.Errorf("%w\n%s", err, c.tails())
		}
	}
	for _, d := range c.opts.crdDirs {
		if err := c.installCRDs(d); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// init writes the credentials and builds the clients; the address is
// filled in by launch.
func (c *Cluster) init() error {
	p, err := newPKI()
	if err != nil {
		return err
	}
	if err := p.write(c.Dir); err != nil {
		return err
	}
	c.Config = &rest.Config{
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caCert, CertData: p.clientCert, KeyData: p.clientKey},
		QPS:             1000,
		Burst:           2000,
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caCert)
	cert, err := tls.X509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		return err
	}
	c.https = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{cert},
	}}}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	return nil
}

// launch picks ports, starts etcd and the API server and waits for both.
func (c *Cluster) launch() error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.URL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	c.Config.Host = c.URL
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	if err := c.writeKubeconfig(); err != nil {
		return err
	}
	for _, old := range []string{"etcd", "etcd.log", "kube-apiserver.log"} {
		_ = os.RemoveAll(filepath.Join(c.Dir, old)) // a failed attempt's
	}

	etcdLog := filepath.Join(c.Dir, "etcd.log")
	c.etcd, err = startProcess("etcd", filepath.Join(c.bin, "etcd"), etcdLog,
		"--name=harness",
		"--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=harness="+peerURL,
		"--unsafe-no-fsync=true", // test data: speed over durability
		"--log-level=warn",
	)
	if err != nil {
		return err
	}
	if err := c.etcd.waitReady(startTimeout, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, etcdURL+"/health")
	}); err != nil {
		return portTaken(err, etcdLog)
	}

	f := func(name string) string { return filepath.Join(c.Dir, name) }
	c.apiCmd = append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + f("apiserver-certs"),
		"--tls-cert-file=" + f("apiserver.crt"),
		"--tls-private-key-file=" + f("apiserver.key"),
		"--client-ca-file=" + f("ca.crt"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=" + c.URL,
		"--service-account-key-file=" + f("sa.pub"),
		"--service-account-signing-key-file=" + f("sa.key"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--allow-privileged=true",
		// No Endpoints for the "kubernetes" Service: its loopback address
		// would only be noise in the EndpointSlices a controller watches.
		"--endpoint-reconciler-type=none",
	}, c.opts.apiFlags...)
	return c.startAPI()
}

// startAPI starts kube-apiserver with c.apiCmd and waits until /readyz
// answers ok and the default namespace exists.
func (c *Cluster) startAPI() error {
	logPath := filepath.Join(c.Dir, "kube-apiserver.log")
	api, err := startProcess("kube-apiserver", filepath.Join(c.bin, "kube-apiserver"), logPath, c.apiCmd...)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.api = api
	c.mu.Unlock()
	err = api.waitReady(startTimeout, func(ctx context.Context) error {
		if err := httpOK(ctx, c.https, c.URL+"/readyz"); err != nil {
			return err
		}
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return portTaken(err, logPath)
	}
	return nil
}

// Stop stops the API server (SIGTERM, then SIGKILL after 2 s); etcd keeps
// running with the data. Clients fail until Start.
func (c *Cluster) Stop() {
	c.mu.Lock()
	api := c.api
	c.mu.Unlock()
	if api != nil {
		api.stop(apiStopGrace)
	}
}

// Start starts the API server again after Stop, on the same address with
// the same certificates and data, and waits until it is ready. It does
// nothing when the API server is running.
func (c *Cluster) Start() error {
	c.mu.Lock()
	running := c.api != nil && !c.api.exited()
	c.mu.Unlock()
	if running {
		return nil
	}
	return c.startAPI()
}

// Close stops the API server and etcd. The folder is left to its owner
// (StartAPIServer's is a t.TempDir, removed by the testing package).
func (c *Cluster) Close() {
	c.Stop()
	if c.etcd != nil {
		c.etcd.stop(stopGrace)
	}
	if c.https != nil {
		c.https.CloseIdleConnections()
	}
}

// Memory returns the resident memory in MiB of the API server and etcd
// (-1 for one that is not running).
func (c *Cluster) Memory() (apiServer, etcd int) {
	apiServer, etcd = -1, -1
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.api != nil && !c.api.exited() {
		apiServer = rssMiB(c.api.cmd.Process.Pid)
	}
	if c.etcd != nil && !c.etcd.exited() {
		etcd = rssMiB(c.etcd.cmd.Process.Pid)
	}
	return apiServer, etcd
}

// writeKubeconfig writes c.Kubeconfig with the admin credential.
func (c *Cluster) writeKubeconfig() error {
	b64 := base64.StdEncoding.EncodeToString
	tc := c.Config.TLSClientConfig
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: harness
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: harness
  context: {cluster: harness, user: %s}
current-context: harness
`, c.URL, b64(tc.CAData), adminUser, b64(tc.CertData), b64(tc.KeyData), adminUser)
	return os.WriteFile(c.Kubeconfig, []byte(data), 0o600)
}

// tails returns the last lines of both logs.
func (c *Cluster) tails() string {
	var b strings.Builder
	for _, name := range []string{"etcd.log", "kube-apiserver.log"} {
		data, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "--- last lines of %s:\n%s\n", name, tail(string(data), 30))
	}
	return b.String()
}

// logTails writes the last lines of both logs to t's log.
func (c *Cluster) logTails(t testing.TB) {
	t.Helper()
	t.Logf("harness: the test failed; cluster logs (in %s):\n%s", c.Dir, c.tails())
}

// httpOK fails unless GET url answers 200.
func httpOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
