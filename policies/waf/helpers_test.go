package waf

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/policies/bodylimit"
)

// member is the next handler: it records the body and X-Request-Id of the
// last request and answers 200.
type member struct {
	mu        sync.Mutex
	calls     int
	body      []byte
	requestID string
}

func (m *member) Serve(w http.ResponseWriter, x *exchange.Request) {
	body, err := io.ReadAll(x.HTTP.Body)
	m.mu.Lock()
	m.calls++
	m.body = body
	m.requestID = x.HTTP.Header.Get("X-Request-Id")
	m.mu.Unlock()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			bodylimit.TooLarge(w, x.HTTP)
			return
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	io.WriteString(w, "member")
}

func (m *member) last() (calls int, body []byte, requestID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls, m.body, m.requestID
}

// logBuffer collects JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// site is a WAF in front of a member, served on loopback.
type site struct {
	*httptest.Server
	member *member
	log    *logBuffer
}

// engines caches the engines of the tests by key: building the Core Rule
// Set takes a while.
var engines = struct {
	sync.Mutex
	m map[[32]byte]*Engine
}{m: map[[32]byte]*Engine{}}

func engineFor(t testing.TB, cfg *config.WAF) *Engine {
	t.Helper()
	engines.Lock()
	defer engines.Unlock()
	key := Key(cfg)
	if e := engines.m[key]; e != nil {
		return e
	}
	e, err := Build(cfg)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	engines.m[key] = e
	return e
}

// startSite serves cfg's WAF in front of a member; limit > 0 puts a body
// limit in front of the WAF, as ramjetd's chain does.
func startSite(t testing.TB, cfg *config.WAF, limit int64) *site {
	t.Helper()
	s := &site{member: &member{}, log: &logBuffer{}}
	var h exchange.Handler = New(engineFor(t, cfg), cfg, slog.New(slog.NewJSONHandler(s.log, nil)), s.member)
	if limit > 0 {
		h = bodylimit.Handler{Limit: limit, Next: h}
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := &exchange.Request{HTTP: r, Path: r.URL.Path, ClientIP: netip.MustParseAddr("127.0.0.1"), Scheme: "http", Port: "80"}
		h.Serve(w, x)
	}))
	t.Cleanup(s.Close)
	return s
}

// do sends a request and returns the status and body of the answer.
func (s *site) do(t testing.TB, method, target, contentType string, body io.Reader, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+target, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Host = "shop.example.com"
	req.Header.Set("User-Agent", "ramjet-test/1.0")
	req.Header.Set("Accept", "text/html")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// lines returns the log lines that hold all of parts.
func lines(log string, parts ...string) []string {
	var out []string
next:
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}
