package daemon

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ramjet-dev/ramjet/dataplane/metrics"
	"github.com/ramjet-dev/ramjet/policies/globalratelimit"
	"github.com/ramjet-dev/ramjet/test/memcached"
)

// globalRateLimitConfig limits /g to one request an hour per client
// address, /h to one per X-Api-Client header (answering 503), counted in
// the memcached .Memcached.
const globalRateLimitConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock"}
  memcached: {addresses: ["{{.Memcached}}"], timeout: 100ms, pool_size: 4}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /g}}
            action: {pool: p}
            policies:
              global_rate_limit: {namespace: uid1, limit: 1, window: 1h, ignored_ranges: [127.0.0.5/32]}
          - match: {path: {prefix: /h}}
            action: {pool: p}
            policies:
              global_rate_limit: {namespace: uid2, limit: 1, window: 1h, key: [{text: "client-"}, {header: X-Api-Client}], status: 503}
          - match: {path: {prefix: /}}
            action: {pool: p}
    pools:
      p: {members: ["{{.Member}}"]}
`

// withHeader sends GET path to td from 127.0.0.2 with X-Api-Client.
func withHeader(t *testing.T, td *testDaemon, path, client string) int {
	t.Helper()
	req, err := http.NewRequest("GET", td.url("http")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "app.test"
	req.Header.Set("X-Api-Client", client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGlobalRateLimit: two ramjetd (two replicas) share their counts
// through a real memcached.
func TestGlobalRateLimit(t *testing.T) {
	mc := memcached.Start(t)
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {})
	data := map[string]any{"Member": b.addr, "Memcached": mc}
	one, two := startDaemon(t, globalRateLimitConfig, data), startDaemon(t, globalRateLimitConfig, data)
	steps := []struct {
		td           *testDaemon
		local, path  string
		header, name string
		want         int
	}{
		{one, "127.0.0.2", "/g", "", "first request", 200},
		{one, "127.0.0.2", "/g", "", "second request, same replica", 429},
		{two, "127.0.0.2", "/g", "", "second request, other replica", 429},
		{two, "127.0.0.3", "/g", "", "another client", 200},
		{one, "127.0.0.5", "/g", "", "ignored range", 200},
		{two, "127.0.0.5", "/g", "", "ignored range again", 200},
		{one, "127.0.0.2", "/", "", "a route without the limit", 200},
		{one, "127.0.0.2", "/h", "team-a", "key by header", 200},
		{two, "127.0.0.3", "/h", "team-a", "same header, other address and replica", 503},
		{two, "127.0.0.2", "/h", "team-b", "another header", 200},
	}
	for i, s := range steps {
		var got int
		if s.header != "" {
			got = withHeader(t, s.td, s.path, s.header)
		} else {
			got = fromAddr(t, s.td, s.local, "", s.path)
		}
		if got != s.want {
			t.Errorf("step %d (%s): %d, want %d", i, s.name, got, s.want)
		}
	}
	refused := testutil.ToFloat64(one.metrics.GlobalRateLimit[globalratelimit.Refused]) + testutil.ToFloat64(one.metrics.GlobalRateLimit[globalratelimit.RefusedCached])
	if passed := testutil.ToFloat64(one.metrics.GlobalRateLimit[globalratelimit.Passed]); passed != 2 || refused != 1 {
		t.Errorf("replica one: passed %v, refused %v; want 2 and 1", passed, refused)
	}

	// A reload with the same memcached keeps its client and counts.
	client := one.memcached
	one.write(t, globalRateLimitConfig, data)
	one.reload(t)
	if one.memcached != client {
		t.Error("a reload with the same server.memcached replaced its client")
	}
	if got := fromAddr(t, one, "127.0.0.2", "", "/g"); got != 429 {
		t.Errorf("after a reload: %d, want 429", got)
	}
}

// TestGlobalRateLimitFailOpen: memcached unreachable, requests pass and
// the failed_open outcome counts them.
func TestGlobalRateLimitFailOpen(t *testing.T) {
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {})
	td := startDaemon(t, globalRateLimitConfig, map[string]any{"Member": b.addr, "Memcached": memcached.FreeAddress(t)})
	for i := 0; i < 3; i++ {
		if got := fromAddr(t, td, "127.0.0.2", "", "/g"); got != 200 {
			t.Fatalf("request %d: %d, want 200 (fail open)", i, got)
		}
	}
	if got := testutil.ToFloat64(td.metrics.GlobalRateLimit[globalratelimit.FailedOpen]); got != 3 {
		t.Errorf("failed_open %v, want 3", got)
	}
}

func TestGlobalRateLimitNeedsMemcached(t *testing.T) {
	cfg := strings.Replace(globalRateLimitConfig, `memcached: {addresses: ["{{.Memcached}}"], timeout: 100ms, pool_size: 4}`, "", 1)
	td := startDaemon(t, baseConfig+`
tenants: {}
`, nil)
	td.write(t, cfg, map[string]any{"Member": "127.0.0.1:1"})
	if _, err := td.admin.Reload(t.Context()); err == nil || !strings.Contains(err.Error(), "needs server.memcached") {
		t.Errorf("reload: %v, want needs server.memcached", err)
	}
}

func TestGlobalRateLimitOutcomes(t *testing.T) {
	if metrics.GlobalRateLimitOutcomes != globalratelimit.Outcomes {
		t.Errorf("metrics %v, policy %v: the label values must match the indexes", metrics.GlobalRateLimitOutcomes, globalratelimit.Outcomes)
	}
}
