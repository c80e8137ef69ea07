package daemon

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHTTPSRedirectTarget checks the shapes of the HTTPS redirect's target:
// the application's (trailing slash trimmed) on its routes and default
// route, and a route's own (port written, slash kept) instead.
func TestHTTPSRedirectTarget(t *testing.T) {
	b := policyBackend(t)
	td := startDaemon(t, `
server:
  listeners: {http: {address: "127.0.0.1:0"}}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        https_redirect: true
        https_redirect_target: {trim_trailing_slash: true}
        routes:
          - {match: {path: {prefix: /trim}}, action: {pool: p}}
          - match: {path: {prefix: /port}}
            action: {pool: p}
            https_redirect_target: {port: 443}
        default_route: {action: {respond: {status: 404}}}
    pools:
      p: {members: ["{{.Member}}"]}
`, map[string]any{"Member": b.addr})
	cases := []struct{ path, want string }{
		{"/trim/a/", "https://app.test/trim/a"},
		{"/trim/a/?q=1/", "https://app.test/trim/a/?q=1"},
		{"/trim/a", "https://app.test/trim/a"},
		{"/port/a/", "https://app.test:443/port/a/"},
		{"/other/", "https://app.test/other"}, // the default route
		{"/", "https://app.test"},
	}
	for _, tc := range cases {
		status, _, h := rawGet(t, td.bound.get("http"), "app.test:8080", tc.path)
		if status != http.StatusPermanentRedirect || h.Get("Location") != tc.want {
			t.Errorf("GET %s: %d Location %q, want 308 %q", tc.path, status, h.Get("Location"), tc.want)
		}
	}
}

// TestForwardedPrefix checks that a rewrite's forwarded_prefix reaches the
// member in place of the client's X-Forwarded-Prefix, submatches filled.
func TestForwardedPrefix(t *testing.T) {
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.URL.Path + " prefix=" + strings.Join(r.Header.Values("X-Forwarded-Prefix"), ",")))
	})
	td := startDaemon(t, `
server:
  listeners: {http: {address: "127.0.0.1:0"}}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {regex: "/(shop|blog)(/|$)(.*)"}}
            action: {pool: p}
            policies: {rewrite: {path: "/$3", forwarded_prefix: "/$1"}}
          - match: {path: {prefix: /plain}}
            action: {pool: p}
    pools:
      p: {members: ["{{.Member}}"]}
`, map[string]any{"Member": b.addr})
	cases := []struct{ path, want string }{
		{"/shop/items", "/items prefix=/shop"},
		{"/blog", "/ prefix=/blog"},
		{"/plain/x", "/plain/x prefix=/client"}, // no rewrite: the client's passes, as in nginx
	}
	for _, tc := range cases {
		resp := rawRequest(t, td.bound.get("http"), "GET "+tc.path+" HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-Prefix: /client\r\nConnection: close\r\n\r\n")
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || body.String() != tc.want {
			t.Errorf("GET %s: %d %q, want 200 %q", tc.path, resp.StatusCode, body.String(), tc.want)
		}
	}
}

// TestNoAccessLog checks that a route with no_access_log leaves no access
// log line while the others of the same server do.
func TestNoAccessLog(t *testing.T) {
	logs := &syncBuffer{}
	b := policyBackend(t)
	dir := t.TempDir()
	td := &testDaemon{dir: dir, config: dir + "/ramjet.yaml"}
	td.write(t, `
server:
  listeners: {http: {address: "127.0.0.1:0"}}
  access_log: true
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - {match: {path: {prefix: /quiet}}, action: {pool: p}, no_access_log: true}
          - {match: {path: {prefix: /loud}}, action: {pool: p}}
    pools:
      p: {members: ["{{.Member}}"]}
`, map[string]any{"Member": b.addr})
	d, err := New(Options{ConfigPath: td.config, DrainDelay: time.Millisecond, ShutdownTimeout: 2 * time.Second,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.closeAll)
	for _, p := range []string{"/quiet/a", "/loud/b", "/quiet/c"} {
		if status, _, _ := rawGet(t, d.bound.get("http"), "app.test", p); status != 200 {
			t.Fatalf("GET %s: %d, want 200", p, status)
		}
	}
	// The line is written after the answer: wait for the one expected.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "path=/loud/b") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := logs.String()
	if !strings.Contains(out, "path=/loud/b") {
		t.Errorf("no access log line for /loud/b:\n%s", out)
	}
	if strings.Contains(out, "path=/quiet") {
		t.Errorf("access log has a line for a no_access_log route:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer safe for the daemon's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
