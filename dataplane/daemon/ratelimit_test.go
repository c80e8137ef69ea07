package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rateLimitConfig has routes of one zone sharing a limit of 3 requests at
// once then one a minute per client (so that no refill happens while a
// test runs), a route of another zone answering 429, a route limiting
// requests in flight and one limiting the answer's bandwidth.
const rateLimitConfig = baseConfig + `
  trusted_proxies: [127.0.0.1/32]
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /a}}
            action: {pool: p}
            policies:
              rate_limit: {zone: "ns/app/uid", rpm: 1, rpm_burst: 2, allowlist: [127.0.0.5/32]}
          - match: {path: {prefix: /b}}
            action: {pool: p}
            policies:
              rate_limit: {zone: "ns/app/uid", rpm: 1, rpm_burst: 2, allowlist: [127.0.0.5/32]}
          - match: {path: {prefix: /other}}
            action: {pool: p}
            policies:
              rate_limit: {zone: "ns/other/uid", rpm: 1, status: {{.Status}}}
          - match: {path: {prefix: /slow}}
            action: {pool: p}
            policies:
              rate_limit: {zone: "ns/slow/uid", connections: 2}
          - match: {path: {prefix: /big}}
            action: {pool: p}
            policies:
              rate_limit: {rate: 64k, rate_after: 32k}
    pools:
      p: {members: ["{{.Member}}"]}
`

// fromAddr sends requests from the loopback address local, with an
// X-Forwarded-For header when xff is set, and returns the status.
func fromAddr(t *testing.T, td *testDaemon, local, xff, path string) int {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext,
	}}
	req, err := http.NewRequest("GET", td.url("http")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "app.test"
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s from %s: %v", path, local, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestRateLimit(t *testing.T) {
	release := make(chan struct{})
	var slowOnce sync.Once
	slowIn := make(chan struct{}, 10)
	big := strings.Repeat("x", 160<<10)
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			slowIn <- struct{}{}
			<-release
		case "/big":
			io.WriteString(w, big)
		}
	})
	t.Cleanup(func() { slowOnce.Do(func() { close(release) }) })
	td := startDaemon(t, rateLimitConfig, map[string]any{"Member": b.addr, "Status": 429})

	type step struct {
		local, xff, path string
		want             int
	}
	steps := []step{
		// 127.0.0.2 (untrusted: its X-Forwarded-For is not read): three at
		// once, then 503, on both routes of the zone.
		{"127.0.0.2", "", "/a", 200},
		{"127.0.0.2", "192.0.2.50", "/a", 200},
		{"127.0.0.2", "192.0.2.51", "/b", 200},
		{"127.0.0.2", "", "/a", 503},
		{"127.0.0.2", "192.0.2.52", "/b", 503},
		// Another client has its own count.
		{"127.0.0.3", "", "/a", 200},
		// Behind the trusted proxy 127.0.0.1, X-Forwarded-For names the client.
		{"127.0.0.1", "192.0.2.1", "/a", 200},
		{"127.0.0.1", "192.0.2.1", "/a", 200},
		{"127.0.0.1", "192.0.2.1", "/a", 200},
		{"127.0.0.1", "192.0.2.1", "/a", 503},
		{"127.0.0.1", "192.0.2.2", "/a", 200},
		{"127.0.0.1", "", "/a", 200},
		// The allowlist is not counted.
		{"127.0.0.5", "", "/a", 200}, {"127.0.0.5", "", "/a", 200}, {"127.0.0.5", "", "/a", 200},
		{"127.0.0.5", "", "/a", 200}, {"127.0.0.5", "", "/b", 200},
		// Another zone counts apart, and answers with its own status.
		{"127.0.0.2", "", "/other", 200},
		{"127.0.0.2", "", "/other", 429},
	}
	for i, s := range steps {
		if got := fromAddr(t, td, s.local, s.xff, s.path); got != s.want {
			t.Errorf("step %d: GET %s from %s (X-Forwarded-For %q): %d, want %d", i, s.path, s.local, s.xff, got, s.want)
		}
	}
	before := b.requests.Load()

	// A reload that keeps the zone keeps the counts.
	td.write(t, rateLimitConfig, map[string]any{"Member": b.addr, "Status": 503})
	td.reload(t)
	if got := fromAddr(t, td, "127.0.0.2", "", "/a"); got != 503 {
		t.Errorf("after a reload: %d, want 503 (the zone's counts are kept)", got)
	}
	if got := fromAddr(t, td, "127.0.0.2", "", "/other"); got != 503 {
		t.Errorf("after a reload to status 503: %d, want 503", got)
	}
	if got := b.requests.Load(); got != before {
		t.Errorf("the member received %d refused requests", got-before)
	}

	t.Run("connections", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); fromAddr(t, td, "127.0.0.2", "", "/slow") }()
		}
		for range 2 {
			select {
			case <-slowIn:
			case <-time.After(10 * time.Second):
				t.Fatal("the slow requests did not reach the member")
			}
		}
		if got := fromAddr(t, td, "127.0.0.2", "", "/slow"); got != 503 {
			t.Errorf("third request in flight: %d, want 503", got)
		}
		done := make(chan int)
		go func() { done <- fromAddr(t, td, "127.0.0.3", "", "/slow") }()
		select {
		case <-slowIn: // another client reached the member
		case code := <-done:
			t.Errorf("another client's request in flight: %d, want it to reach the member", code)
		case <-time.After(10 * time.Second):
			t.Fatal("another client's request did not reach the member")
		}
		slowOnce.Do(func() { close(release) })
		wg.Wait()
		if code := <-done; code != 200 {
			t.Errorf("another client's request: %d, want 200", code)
		}
		if got := fromAddr(t, td, "127.0.0.2", "", "/slow"); got != 200 {
			t.Errorf("after the requests ended: %d, want 200", got)
		}
	})

	t.Run("bandwidth", func(t *testing.T) {
		// 160 KiB at 64 KiB/s after 32 KiB: 96 KiB at once, the other
		// 64 KiB over about a second.
		c := client()
		req, _ := http.NewRequestWithContext(context.Background(), "GET", td.url("http")+"/big", nil)
		req.Host = "app.test"
		began := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(began)
		if n != int64(len(big)) {
			t.Fatalf("body of %d bytes, want %d", n, len(big))
		}
		if took < 700*time.Millisecond || took > 20*time.Second {
			t.Errorf("160 KiB at 64 KiB/s after 32 KiB took %v, want about 1s", took)
		}
	})
}

func TestRateLimitZoneMustAgree(t *testing.T) {
	td := startDaemon(t, rateLimitConfig, map[string]any{"Member": "127.0.0.1:1", "Status": 503})
	bad := strings.Replace(rateLimitConfig, `{zone: "ns/app/uid", rpm: 1, rpm_burst: 2, allowlist: [127.0.0.5/32]}
          - match: {path: {prefix: /other}}`, `{zone: "ns/app/uid", rpm: 2, rpm_burst: 2}
          - match: {path: {prefix: /other}}`, 1)
	if bad == rateLimitConfig {
		t.Fatal("the test's replacement does not apply")
	}
	td.write(t, bad, map[string]any{"Member": "127.0.0.1:1", "Status": 503})
	_, err := td.admin.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "routes of one zone must set the same") {
		t.Fatalf("reload with a zone of two rates: %v, want a refusal", err)
	}
}
