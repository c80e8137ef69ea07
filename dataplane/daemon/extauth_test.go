package daemon

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// extAuthConfig is poolConfig with external authentication on the route;
// the service is on loopback, which allow_loopback_members permits.
const extAuthConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: true}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
            policies:
              external_auth:
                url: "{{.Auth}}/check"
                response_headers: [X-Auth-Request-User]
                keepalive: {connections: 8}
                {{if .Cache}}cache: {key: ["header:Authorization"]}{{end}}
                {{if .Timeout}}timeouts: {response: {{.Timeout}}}{{end}}
    pools:
      p:
        members: ["{{.Member}}"]
`

// tokenService answers 200 with X-Auth-Request-User: alice to the bearer
// token "good" and 401 to anything else, counting its calls.
func tokenService(t testing.TB) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="app"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Auth-Request-User", "alice")
	}))
	t.Cleanup(s.Close)
	return s, &calls
}

func TestExternalAuth(t *testing.T) {
	auth, _ := tokenService(t)
	member := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "user="+r.Header.Get("X-Auth-Request-User"))
	})
	td := startDaemon(t, extAuthConfig, map[string]any{"Auth": auth.URL, "Member": member.addr})
	tests := []struct {
		name       string
		header     http.Header
		wantStatus int
		wantBody   string
		wantAuth   string // WWW-Authenticate
	}{
		{name: "valid token", header: http.Header{"Authorization": {"Bearer good"}}, wantStatus: 200, wantBody: "user=alice"},
		{name: "forged user header is replaced", header: http.Header{"Authorization": {"Bearer good"}, "X-Auth-Request-User": {"root"}}, wantStatus: 200, wantBody: "user=alice"},
		{name: "no token", wantStatus: 401, wantAuth: `Bearer realm="app"`},
	}
	c := &http.Client{Timeout: 10 * time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, td.url("http")+"/", nil)
			req.Host = "app.test"
			for name, values := range tt.header {
				req.Header[name] = values
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.wantAuth {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tt.wantAuth)
			}
		})
	}
}

// TestExternalAuthSlowService: a service that answers later than the
// route's response timeout (timeouts.response, 60s unless set; the
// controller always leaves it so, as ingress-nginx does) gets the request
// a 500 from ramjetd, and the member never sees it. It asserts what the
// answer is, never how soon it came.
func TestExternalAuthSlowService(t *testing.T) {
	release := make(chan struct{})
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(auth.Close)
	t.Cleanup(func() { close(release) }) // before auth.Close, which waits for its handlers
	var calls atomic.Int64
	member := startBackend(t, func(http.ResponseWriter, *http.Request) { calls.Add(1) })
	td := startDaemon(t, extAuthConfig, map[string]any{"Auth": auth.URL, "Member": member.addr, "Timeout": "200ms"})
	req, _ := http.NewRequest(http.MethodGet, td.url("http")+"/", nil)
	req.Host = "app.test"
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("no answer while the service stalls: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || calls.Load() != 0 {
		t.Errorf("status = %d, member calls = %d; want 500 and none", resp.StatusCode, calls.Load())
	}
}

func TestExternalAuthLoopbackRefused(t *testing.T) {
	config := strings.Replace(extAuthConfig, ", allow_loopback_members: true", "", 1)
	dir := t.TempDir()
	td := &testDaemon{dir: dir, config: dir + "/ramjet.yaml"}
	td.write(t, config, map[string]any{"Auth": "http://127.0.0.1:9", "Member": "198.18.0.1:80"})
	d, err := New(Options{ConfigPath: td.config, Log: testLogger(t)})
	if err == nil {
		err = d.Start()
		d.closeAll()
	}
	if err == nil || !strings.Contains(err.Error(), "external_auth.url") || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("Start = %v, want a refusal of external_auth.url as a loopback address", err)
	}
}

// BenchmarkExternalAuth measures a proxied GET through ramjetd's handler
// (as BenchmarkProxy's "handler" case) without external authentication,
// with it answered from the cache, and with a subrequest to the service on
// loopback for every request (keep-alive connections to the service).
func BenchmarkExternalAuth(b *testing.B) {
	auth, calls := tokenService(b)
	body := strings.Repeat("x", 1024)
	member := startBackend(b, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	cases := []struct {
		name      string
		config    string
		cache     bool
		wantCalls bool
	}{
		{name: "none", config: poolConfig},
		{name: "cache-hit", config: extAuthConfig, cache: true},
		{name: "cache-miss", config: extAuthConfig, wantCalls: true},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			td := startDaemon(b, bc.config, map[string]any{"Auth": auth.URL, "Member": member.addr, "Members": []string{member.addr}, "Cache": bc.cache})
			h := &entry{d: td.Daemon, listener: "http", port: "80"}
			w := &discardWriter{header: http.Header{}}
			before := calls.Load()
			b.ReportAllocs()
			for b.Loop() {
				req := &http.Request{
					Method: http.MethodGet, Host: "app.test", RemoteAddr: "127.0.0.1:40000",
					URL: benchURL, Header: http.Header{"User-Agent": {"bench"}, "Accept": {"*/*"}, "Authorization": {"Bearer good"}},
					Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody,
				}
				clear(w.header)
				h.ServeHTTP(w, req)
				if w.status != 200 {
					b.Fatalf("status %d", w.status)
				}
			}
			if asked := calls.Load() - before; bc.wantCalls != (asked > 1) {
				b.Fatalf("the service was asked %d times", asked)
			}
		})
	}
}

// selfAuthConfig serves app.test with its authentication service under
// /oauth2/ of the same host, which the rest of the host asks as
// https://$host/oauth2/auth (self: ramjetd asks itself); loop.test asks
// itself for a path that is authenticated again.
const selfAuthConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
    https: {address: "127.0.0.1:0", tls: {}}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: true}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /oauth2/}}
            action: {pool: auth}
          - match: {path: {prefix: /}}
            action: {pool: p}
            policies:
              external_auth:
                url: https://$host/oauth2/auth
                self: true
                response_headers: [X-Auth-Request-User]
                signin_url: https://$host/oauth2/start?rd=$escaped_request_uri
      loop:
        domains: [loop.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
            policies:
              external_auth: {url: "http://$host/again", self: true}
    pools:
      p:
        members: ["{{.Member}}"]
      auth:
        members: ["{{.Auth}}"]
`

// TestExternalAuthSelf: the subrequest of https://$host/oauth2/auth goes
// through ramjetd's own HTTPS listener to the route of /oauth2/ on the
// same host, and its answer decides (200 with the user, 401 as a redirect
// to the sign-in page of the same host); a self subrequest that meets
// external authentication again answers 500.
func TestExternalAuthSelf(t *testing.T) {
	auth, calls := tokenService(t)
	member := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "user="+r.Header.Get("X-Auth-Request-User"))
	})
	td := startDaemon(t, selfAuthConfig, map[string]any{"Auth": strings.TrimPrefix(auth.URL, "http://"), "Member": member.addr})
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(host, path, token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, td.url("http")+path, nil)
		req.Host = host
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get("app.test", "/cart?id=7", "good")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "user=alice" {
		t.Errorf("with the token: %d %q, want 200 user=alice", resp.StatusCode, body)
	}
	resp = get("app.test", "/cart?id=7", "")
	if want := "https://app.test/oauth2/start?rd=%2Fcart%3Fid%3D7"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("without the token: %d to %q, want 302 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	if calls.Load() != 2 {
		t.Errorf("the service was asked %d times, want 2", calls.Load())
	}
	if resp = get("loop.test", "/", "good"); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("a self subrequest authenticated again: %d, want 500", resp.StatusCode)
	}
}
