package daemon

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// poolConfig serves app.test from one pool whose members and settings the
// test chooses.
const poolConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
    pools:
      p:
        members: [{{range .Members}}"{{.}}", {{end}}]
        {{if .Balance}}balance: {{.Balance}}{{end}}
        {{if .Retries}}retries: {{.Retries}}{{end}}
`

// rawBackend accepts connections and hands each request head (and body, by
// Content-Length) to behave, which decides what the member does.
type rawBackend struct {
	addr     string
	requests atomic.Int64
}

func startRawBackend(t *testing.T, behave func(c *net.TCPConn, head string)) *rawBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	b := &rawBackend{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(r)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					b.requests.Add(1)
					behave(c.(*net.TCPConn), req.Method)
				}
			}()
		}
	}()
	return b
}

// reset closes the connection with a TCP RST.
func reset(c *net.TCPConn, _ string) {
	c.SetLinger(0)
	c.Close()
}

// partial sends a response head and part of the body, then resets.
func partial(c *net.TCPConn, _ string) {
	io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
	time.Sleep(20 * time.Millisecond)
	c.SetLinger(0)
	c.Close()
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func send(t *testing.T, c *http.Client, td *testDaemon, method, path string, body []byte) (int, string, error) {
	t.Helper()
	req, _ := http.NewRequest(method, td.url("http")+path, bytes.NewReader(body))
	req.Host = "app.test"
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestKeepAliveReuse(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	c := client()
	for i := range 50 {
		if status, _, err := send(t, c, td, http.MethodGet, fmt.Sprintf("/%d", i), nil); err != nil || status != 200 {
			t.Fatalf("request %d: %d %v", i, status, err)
		}
	}
	if got := b.conns.Load(); got != 1 {
		t.Errorf("50 sequential requests opened %d connections to the member, want 1", got)
	}
	// A reload keeps the pool's transport and its idle connection.
	td.reload(t)
	if status, _, err := send(t, c, td, http.MethodGet, "/after-reload", nil); err != nil || status != 200 {
		t.Fatalf("after reload: %d %v", status, err)
	}
	if got := b.conns.Load(); got != 1 {
		t.Errorf("after a reload the member saw %d connections, want 1", got)
	}
}

func TestRetries(t *testing.T) {
	cases := []struct {
		name       string
		method     string
		failing    func(*net.TCPConn, string)
		wantStatus int
		// wantFailingHits is how often the failing member saw the request.
		wantFailingHits int64
		wantGoodHits    int64
	}{
		{"GET retried after a reset before the response head", http.MethodGet, reset, 200, 1, 1},
		{"PUT retried after a reset before the response head", http.MethodPut, reset, 200, 1, 1},
		{"POST never sent twice", http.MethodPost, reset, 502, 1, 0},
		{"PATCH never sent twice", http.MethodPatch, reset, 502, 1, 0},
		{"no retry after response bytes", http.MethodGet, partial, 0, 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			failing := startRawBackend(t, tc.failing)
			good := startBackend(t, echo("good"))
			// Round robin from a fresh cursor tries the first member first.
			td := startDaemon(t, poolConfig, map[string]any{"Members": []string{failing.addr, good.addr}})
			status, body, err := send(t, client(), td, tc.method, "/", []byte("payload"))
			if tc.wantStatus == 0 {
				// The member broke off after sending part of its answer: the
				// client must see a failure, never a complete-looking answer.
				if err == nil {
					t.Errorf("got %d %q without error, want a broken response", status, body)
				}
			} else if status != tc.wantStatus {
				t.Errorf("status %d (%v) %q, want %d", status, err, body, tc.wantStatus)
			}
			if got := failing.requests.Load(); got != tc.wantFailingHits {
				t.Errorf("failing member saw %d requests, want %d", got, tc.wantFailingHits)
			}
			if got := good.requests.Load(); got != tc.wantGoodHits {
				t.Errorf("good member saw %d requests, want %d", got, tc.wantGoodHits)
			}
		})
	}
}

func TestRetryAfterFailedConnect(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			good := startBackend(t, echo("good"))
			td := startDaemon(t, poolConfig, map[string]any{"Members": []string{closedAddr(t), good.addr}})
			status, body, err := send(t, client(), td, method, "/", bytes.Repeat([]byte("x"), 100<<10))
			if err != nil || status != 200 || !strings.HasPrefix(body, "good "+method+" / 102400") {
				t.Fatalf("got %d %q %v, want 200 from the good member with the whole body", status, body, err)
			}
			p, _ := td.Pool("p")
			if p.Retries != 1 || p.Failures != 1 {
				t.Errorf("pool counters: retries %d failures %d, want 1 and 1", p.Retries, p.Failures)
			}
		})
	}
}

func TestRetryOn503(t *testing.T) {
	unavailable := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	good := startBackend(t, echo("good"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{unavailable.addr, good.addr}})
	c := client()
	// Round robin: the GET tries the first member, then the second.
	if status, body, _ := send(t, c, td, http.MethodGet, "/", nil); status != 200 {
		t.Errorf("GET: %d %q, want 200 from the second member", status, body)
	}
	// The POST goes to the first member again; its 503 is the answer,
	// because a POST that reached a member is never sent again.
	if status, _, _ := send(t, c, td, http.MethodPost, "/", []byte("x")); status != 503 {
		t.Errorf("POST: status %d, want the member's 503", status)
	}
	if u, g := unavailable.requests.Load(), good.requests.Load(); u != 2 || g != 1 {
		t.Errorf("the 503 member saw %d requests and the good one %d, want 2 and 1", u, g)
	}
}

func TestEveryMemberFailing(t *testing.T) {
	cases := []struct {
		name    string
		members []string
		status  int
		body    string
	}{
		{"empty pool", nil, 503, "Service Unavailable: no backend is available for this route\n"},
		{"nothing listens", []string{"CLOSED", "CLOSED"}, 502, "Bad Gateway: the backend could not be reached\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var members []string
			for _, m := range tc.members {
				if m == "CLOSED" {
					m = closedAddr(t)
				}
				members = append(members, m)
			}
			td := startDaemon(t, poolConfig, map[string]any{"Members": members})
			status, body, _ := send(t, client(), td, http.MethodGet, "/", nil)
			if status != tc.status || body != tc.body {
				t.Errorf("got %d %q, want %d %q", status, body, tc.status, tc.body)
			}
		})
	}
}

func TestResponseTimeout(t *testing.T) {
	slow := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	})
	td := startDaemon(t, poolConfig+"        response_timeout: 100ms\n", map[string]any{"Members": []string{slow.addr}})
	status, body, _ := send(t, client(), td, http.MethodGet, "/", nil)
	if status != 504 || !strings.Contains(body, "did not answer in time") {
		t.Errorf("got %d %q, want 504", status, body)
	}
}

func TestForwardedHeaders(t *testing.T) {
	seen := make(chan http.Header, 1)
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		seen <- h
	})
	config := strings.Replace(poolConfig, "  admin:", "  trusted_proxies: [{{.Trusted}}]\n  admin:", 1)
	cases := []struct {
		name    string
		trusted string
		headers string
		want    map[string]string
	}{
		{
			name:    "untrusted peer: client values replaced",
			trusted: "10.0.0.0/8",
			headers: "X-Forwarded-For: 1.2.3.4\r\nX-Forwarded-Proto: https\r\nX-Real-IP: 1.2.3.4\r\nX-Forwarded-Host: evil.test\r\nForwarded: for=1.2.3.4\r\n",
			want: map[string]string{
				"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http", "X-Real-Ip": "127.0.0.1",
				"X-Forwarded-Host": "app.test", "Forwarded": "", "Host": "app.test",
			},
		},
		{
			name:    "trusted peer: chain extended, client address from it",
			trusted: "127.0.0.0/8",
			headers: "X-Forwarded-For: 203.0.113.9, 127.0.0.5\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: public.test\r\n",
			want: map[string]string{
				"X-Forwarded-For": "203.0.113.9, 127.0.0.5, 127.0.0.1", "X-Forwarded-Proto": "https",
				"X-Real-Ip": "203.0.113.9", "X-Forwarded-Host": "public.test",
			},
		},
		{
			name:    "hop-by-hop headers and the headers Connection names are removed, ours stay",
			trusted: "10.0.0.0/8",
			headers: "Connection: keep-alive, X-Forwarded-For, X-Real-IP, X-Secret\r\nX-Secret: s\r\nKeep-Alive: 5\r\nProxy-Authorization: Basic x\r\nTE: gzip\r\n",
			want: map[string]string{
				"X-Forwarded-For": "127.0.0.1", "X-Real-Ip": "127.0.0.1", "X-Secret": "", "Keep-Alive": "",
				"Proxy-Authorization": "", "Te": "", "Connection": "",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := startDaemon(t, config, map[string]any{"Members": []string{b.addr}, "Trusted": tc.trusted})
			resp := rawRequest(t, td.bound.get("http"), "GET / HTTP/1.1\r\nHost: app.test\r\n"+tc.headers+"\r\n")
			resp.Body.Close()
			h := <-seen
			for name, want := range tc.want {
				if got := strings.Join(h[name], ","); got != want {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
			if len(h.Get("X-Request-Id")) != 32 {
				t.Errorf("X-Request-Id %q, want 32 hex digits", h.Get("X-Request-Id"))
			}
		})
	}
}

func TestResponseHopByHopHeaders(t *testing.T) {
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Internal")
		w.Header().Set("X-Internal", "secret")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("X-Public", "yes")
	})
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	_, _, header := get(t, client(), td.url("http")+"/", "app.test")
	if header.Get("X-Internal") != "" || header.Get("Keep-Alive") != "" || header.Get("X-Public") != "yes" {
		t.Errorf("response headers %v: want X-Public only", header)
	}
}

func TestBodyLimit(t *testing.T) {
	b := startBackend(t, echo("b"))
	config := strings.Replace(poolConfig, "  admin:", "  limits: {max_request_body_bytes: 1k}\n  admin:", 1)
	td := startDaemon(t, config, map[string]any{"Members": []string{b.addr}})
	c := client()
	if status, _, _ := send(t, c, td, http.MethodPost, "/", make([]byte, 1024)); status != 200 {
		t.Errorf("1 KiB body: status %d, want 200", status)
	}
	if status, _, _ := send(t, c, td, http.MethodPost, "/", make([]byte, 1025)); status != 413 {
		t.Errorf("1 KiB + 1 body: status %d, want 413", status)
	}
	// Without Content-Length the limit is counted while streaming.
	req, _ := http.NewRequest(http.MethodPost, td.url("http")+"/", io.MultiReader(strings.NewReader(strings.Repeat("x", 4096))))
	req.Host, req.ContentLength = "app.test", -1
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("streamed 4 KiB body: status %d, want 413", resp.StatusCode)
	}
}

func TestWeightedPools(t *testing.T) {
	a := startBackend(t, echo("a"))
	b := startBackend(t, echo("b"))
	td := startDaemon(t, baseConfig+`
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pools: [{pool: a, weight: 80}, {pool: b, weight: 20}]}
    pools:
      a: {members: ["{{.A}}"]}
      b: {members: ["{{.B}}"]}
`, map[string]any{"A": a.addr, "B": b.addr})
	c := client()
	for range 1000 {
		if status, _, err := send(t, c, td, http.MethodGet, "/", nil); status != 200 {
			t.Fatalf("status %d %v", status, err)
		}
	}
	if got := a.requests.Load(); got < 740 || got > 860 {
		t.Errorf("pool a got %d of 1000 requests, want about 800", got)
	}
}

func TestCookieAffinity(t *testing.T) {
	var members []string
	for i := range 4 {
		members = append(members, startBackend(t, echo(fmt.Sprint(i))).addr)
	}
	td := startDaemon(t, poolConfig+"        hash: {by: cookie, cookie: {max_age: 1h}}\n", map[string]any{"Members": members, "Balance": "hash"})
	c := client()
	req, _ := http.NewRequest(http.MethodGet, td.url("http")+"/", nil)
	req.Host = "app.test"
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cookie := resp.Header.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, "INGRESSCOOKIE=") || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "Max-Age=3600") {
		t.Fatalf("Set-Cookie %q", cookie)
	}
	value := strings.SplitN(strings.SplitN(cookie, ";", 2)[0], "=", 2)[1]
	for range 20 {
		req, _ := http.NewRequest(http.MethodGet, td.url("http")+"/", nil)
		req.Host = "app.test"
		req.Header.Set("Cookie", "other=1; INGRESSCOOKIE="+value)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body[:1]) != string(first[:1]) {
			t.Fatalf("request with the cookie went to member %s, the first to %s", body[:1], first[:1])
		}
		if resp.Header.Get("Set-Cookie") != "" {
			t.Fatal("a request with the cookie got a new one")
		}
	}
}

// TestInFlightAcrossReload starts a request under one generation, reloads,
// and checks the request ends by decrementing the counter it incremented.
func TestInFlightAcrossReload(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	})
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		send(t, client(), td, http.MethodGet, "/", nil)
	}()
	<-arrived
	before := td.current.Load().number
	// The new generation has an extra member; the old one stays.
	td.write(t, poolConfig, map[string]any{"Members": []string{b.addr, closedAddr(t)}})
	if gen := td.reload(t); gen != before+1 {
		t.Fatalf("generation %d, want %d", gen, before+1)
	}
	p, _ := td.Pool("p")
	if p.InFlight != 1 {
		t.Errorf("in flight under the new generation: %d, want 1 (carried by member address)", p.InFlight)
	}
	close(release)
	wg.Wait()
	p, _ = td.Pool("p")
	if p.InFlight != 0 {
		t.Errorf("in flight after the request ended: %d, want 0", p.InFlight)
	}
}
