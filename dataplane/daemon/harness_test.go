package daemon

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"text/template"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
)

// testDaemon is a ramjetd running in the test process on loopback ports.
type testDaemon struct {
	*Daemon
	dir    string
	config string
	admin  *admin.Client
}

// startDaemon writes the configuration (a text/template given the test
// directory as .Dir), starts a daemon on it and stops it when the test ends.
func startDaemon(t testing.TB, configTemplate string, data map[string]any) *testDaemon {
	t.Helper()
	dir := t.TempDir()
	td := &testDaemon{dir: dir, config: filepath.Join(dir, "ramjet.yaml")}
	td.write(t, configTemplate, data)
	d, err := New(Options{ConfigPath: td.config, DrainDelay: time.Millisecond, ShutdownTimeout: 2 * time.Second, Log: testLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := d.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(d.closeAll)
	td.Daemon = d
	if d.socket != "" {
		td.admin = admin.NewClient(d.socket)
	}
	return td
}

// write renders the configuration template into the daemon's file.
func (td *testDaemon) write(t testing.TB, configTemplate string, data map[string]any) {
	t.Helper()
	if data == nil {
		data = map[string]any{}
	}
	data["Dir"] = td.dir
	tmpl := template.Must(template.New("config").Parse(configTemplate))
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		t.Fatalf("config template: %v", err)
	}
	if err := os.WriteFile(td.config, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// url returns the base URL of a listener.
func (td *testDaemon) url(listener string) string {
	scheme := "http"
	if ln := td.current.Load().config.Server.Listeners[listener]; ln != nil && ln.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + td.bound.get(listener)
}

// busyAddress is a loopback address another socket holds until the test
// ends.
func busyAddress(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// testLogger sends the daemon's logs to the test log.
func testLogger(t testing.TB) *slog.Logger {
	level := slog.LevelDebug
	if _, bench := t.(*testing.B); bench {
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// baseConfig is the server section every test configuration starts with.
const baseConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
    https: {address: "127.0.0.1:0", tls: {}}
  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock"}
`

// backend is an HTTP server on loopback that counts requests and
// connections.
type backend struct {
	addr     string
	server   *http.Server
	requests atomic.Int64
	conns    atomic.Int64
}

// startBackend serves handler on 127.0.0.1 and stops it when the test ends.
func startBackend(t testing.TB, handler http.HandlerFunc) *backend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{addr: ln.Addr().String()}
	b.server = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b.requests.Add(1)
			handler(w, r)
		}),
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				b.conns.Add(1)
			}
		},
	}
	go b.server.Serve(ln)
	t.Cleanup(func() { b.server.Close() })
	return b
}

// echo answers with its name and what it received.
func echo(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Backend", name)
		fmt.Fprintf(w, "%s %s %s %d", name, r.Method, r.URL.RequestURI(), len(body))
	}
}

// client returns an HTTP client that trusts any certificate (the daemon's
// is generated) and never follows redirects.
func client() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			MaxIdleConnsPerHost: 64,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
}

// get sends a request with a Host header and returns status and body.
func get(t *testing.T, c *http.Client, url, host string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", url, host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// testCA is a certificate authority for test certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns the PEM certificate and key of a leaf for names (DNS names
// or IP addresses).
func (ca *testCA) issue(t *testing.T, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// writeFile writes data into dir and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// reload asks the daemon to reload through its admin socket.
func (td *testDaemon) reload(t *testing.T) uint64 {
	t.Helper()
	gen, err := td.admin.Reload(context.Background())
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	return gen
}

// rawGet sends a GET with exactly the path and Host given over a new
// connection and returns status, body and headers.
func rawGet(t *testing.T, addr, host, path string) (int, string, http.Header) {
	t.Helper()
	resp := rawRequest(t, addr, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// dialRaw writes request bytes to a new connection and returns it with a
// reader of what comes back.
func dialRaw(t *testing.T, addr, request string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn)
}

// rawRequest writes request bytes to a new connection and reads one
// response.
func rawRequest(t *testing.T, addr, request string) *http.Response {
	t.Helper()
	_, br := dialRaw(t, addr, request)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return resp
}

func mustParseURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
