package publish

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/daemon"
)

// rig is a real ramjetd running in the test process, started from a
// bootstrap configuration in a folder that also holds its admin socket,
// and a Publisher for that folder.
type rig struct {
	t      *testing.T
	dir    string
	base   *config.Server
	admin  *admin.Client
	pub    *Publisher
	daemon *daemon.Daemon
}

// newRig bootstraps a folder, starts ramjetd on it and returns a Publisher
// for it. The folder is short-named under the system's temporary folder:
// a unix socket path must stay under about 100 bytes.
func newRig(t *testing.T) *rig {
	t.Helper()
	dir, err := os.MkdirTemp("", "rj")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &rig{t: t, dir: dir, base: &config.Server{
		Listeners: map[string]*config.Listener{"http": {Address: "127.0.0.1:0"}},
		// The test backends are on loopback: a host install's setting.
		Admin: config.Admin{Socket: filepath.Join(dir, "admin.sock"), AllowLoopbackMembers: true},
	}}
	if err := Bootstrap(r.base, dir, DefaultConfigName); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	r.admin = admin.NewClient(r.base.Admin.Socket)
	r.start()
	r.pub, err = New(Options{Dir: dir, Admin: r.admin, Log: testLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// start starts ramjetd from the configuration file in the folder.
func (r *rig) start() {
	r.t.Helper()
	d, err := daemon.New(daemon.Options{ConfigPath: filepath.Join(r.dir, DefaultConfigName), DrainDelay: time.Millisecond, ShutdownTimeout: time.Second, Log: testLogger(r.t)})
	if err != nil {
		r.t.Fatalf("starting ramjetd: %v", err)
	}
	if err := d.Start(); err != nil {
		r.t.Fatalf("starting ramjetd: %v", err)
	}
	r.daemon = d
	r.t.Cleanup(r.stop)
}

// stop shuts ramjetd down (once).
func (r *rig) stop() {
	if r.daemon != nil {
		r.daemon.Shutdown()
		r.daemon = nil
	}
}

func (r *rig) status() admin.Status {
	r.t.Helper()
	s, err := r.admin.Status(context.Background())
	if err != nil {
		r.t.Fatalf("GET /v1/status: %v", err)
	}
	return s
}

// get sends GET / to ramjetd's http listener for host and returns the
// status and body.
func (r *rig) get(host string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+r.status().Listeners["http"]+"/", nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Host = host
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		r.t.Fatalf("GET / (Host %s): %v", host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// wantServed checks that a request for host is answered by the backend
// named want.
func (r *rig) wantServed(host, want string) {
	r.t.Helper()
	if status, body := r.get(host); status != http.StatusOK || body != want {
		r.t.Errorf("GET / (Host %s) = %d %q, want 200 %q", host, status, body, want)
	}
}

// configFile returns the configuration file's bytes.
func (r *rig) configFile() []byte {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.dir, DefaultConfigName))
	if err != nil {
		r.t.Fatal(err)
	}
	return data
}

// mustMarshal is Marshal for configurations that cannot fail.
func mustMarshal(t *testing.T, cfg *config.Config) []byte {
	t.Helper()
	data, err := Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// site describes a test configuration of the tenant "ingress": the
// catch-all application proxies to the pool p_web, and when cert is set,
// the application h_secure serves secure.test with that certificate.
type site struct {
	web  []string // members of p_web
	api  []string // members of p_api, a second api pool when not nil
	cert *testCert
	// balance of p_web, a structural setting
	balance config.Balance
	// brokenRoute points the catch-all's route at a pool that does not
	// exist, which ramjetd's validation refuses.
	brokenRoute bool
}

// config renders s on the rig's server section and returns it with the
// generated files it names.
func (r *rig) config(s site) (*config.Config, map[string][]byte) {
	files := map[string][]byte{}
	tenant := &config.Tenant{
		Applications: map[string]*config.Application{
			"default": {Domains: []string{"*"}, Routes: []*config.Route{{
				Match: config.Match{Path: config.PathMatch{Prefix: "/"}}, Action: config.Action{Pool: "p_web"},
			}}},
		},
		Pools: map[string]*config.Pool{"p_web": {MembersFrom: config.MembersAPI, Members: members(s.web), Balance: s.balance}},
	}
	if s.brokenRoute {
		tenant.Applications["default"].Routes[0].Action.Pool = "p_missing"
	}
	if s.api != nil {
		tenant.Pools["p_api"] = &config.Pool{MembersFrom: config.MembersAPI, Members: members(s.api)}
	}
	if s.cert != nil {
		certName, keyName := core.FileName(s.cert.cert, ".crt"), core.FileName(s.cert.key, ".key")
		files[certName], files[keyName] = s.cert.cert, s.cert.key
		tenant.Applications["h_secure"] = &config.Application{
			Domains: []string{"secure.test"},
			TLS:     &config.CertificateFiles{CertFile: filepath.Join(r.dir, certName), KeyFile: filepath.Join(r.dir, keyName)},
			Routes: []*config.Route{{
				Match: config.Match{Path: config.PathMatch{Prefix: "/"}}, Action: config.Action{Pool: "p_web"},
			}},
		}
	}
	return &config.Config{Server: *r.base, Tenants: map[string]*config.Tenant{core.TenantName: tenant}}, files
}

func members(addrs []string) []config.Member {
	m := []config.Member{}
	for _, a := range addrs {
		m = append(m, config.Member{Address: a})
	}
	return m
}

// testCert is a PEM certificate and key, or broken content.
type testCert struct{ cert, key []byte }

// newCert returns a self-signed certificate for names.
func newCert(t *testing.T, names ...string) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}

// backend is an HTTP server on loopback that answers with its name.
func backend(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, name)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dirFiles lists the names in dir with their permission bits.
func dirFiles(t *testing.T, dir string) map[string]os.FileMode {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]os.FileMode{}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = fi.Mode()
	}
	return files
}

// testLogger sends logs to the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
