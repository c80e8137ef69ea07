package extauth

import (
	"bytes"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// authService is an authentication service on loopback that records the
// subrequests it receives.
type authService struct {
	*httptest.Server
	calls atomic.Int64
	mu    sync.Mutex
	last  *seenRequest
	conns map[string]bool // remote addresses seen
}

// seenRequest is what the service saw of a subrequest.
type seenRequest struct {
	method, host string
	header       http.Header
	bodyBytes    int
}

func startAuth(t testing.TB, handler http.HandlerFunc) *authService {
	t.Helper()
	s := &authService{conns: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.last = &seenRequest{method: r.Method, host: r.Host, header: r.Header.Clone(), bodyBytes: len(body)}
		s.conns[r.RemoteAddr] = true
		s.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authService) seen() *seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *authService) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// member is the next handler: it records the request's headers and
// answers 200.
type member struct {
	calls  atomic.Int64
	mu     sync.Mutex
	header http.Header // of the last request
}

func (m *member) Serve(w http.ResponseWriter, x *exchange.Request) {
	m.calls.Add(1)
	m.mu.Lock()
	m.header = x.HTTP.Header.Clone()
	m.mu.Unlock()
	io.WriteString(w, "member")
}

// newHandler builds the policy in front of a fresh member; loopback is
// allowed unless the test says otherwise.
func newHandler(t testing.TB, cfg *config.ExternalAuth) (*Handler, *member, *bytes.Buffer) {
	t.Helper()
	m := &member{}
	var logs bytes.Buffer
	h, err := New(cfg, Options{AllowLoopback: true, Log: newLogger(&logs)}, m)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(h.Close)
	return h, m, &logs
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var clientAddr = netip.MustParseAddr("192.0.2.10")

// newExchange is a request to app.test from 192.0.2.10, not a trusted
// proxy, on the plain HTTP listener.
func newExchange(method, target string, header http.Header) *exchange.Request {
	r := httptest.NewRequest(method, "http://app.test"+target, nil)
	r.RemoteAddr = "192.0.2.10:40000"
	for name, values := range header {
		r.Header[name] = values
	}
	return &exchange.Request{HTTP: r, Path: r.URL.Path, ClientIP: clientAddr, Peer: clientAddr, Scheme: "http", Port: "80"}
}

// serve sends one request through h and returns the recorded answer.
func serve(h *Handler, x *exchange.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.Serve(w, x)
	return w
}

// startTLSAuth is an https authentication service on loopback answering
// 200, with a certificate of httptest's own authority.
func startTLSAuth(t testing.TB) *httptest.Server {
	t.Helper()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(s.Close)
	return s
}

// writeCA writes the certificate of s as a CA file and returns its path.
func writeCA(t testing.TB, s *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{w: w}, nil))
}
