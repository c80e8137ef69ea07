package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// apiPoolConfig has one application whose pool takes its members from the
// admin API, seeded with .Seed, and a static route whose answer names the
// configuration's version, so a test can tell which generation answered.
// The test backends are on loopback, which members from the API may be
// only with allow_loopback_members; .Strict leaves it off.
const apiPoolConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
    https: {address: "127.0.0.1:0", tls: {}}
  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: {{not .Strict}}}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {exact: /version}}
            action: {respond: {status: 200, body: "v{{.Version}}"}}
          - match: {path: {prefix: /}}
            action: {pool: p}
    pools:
      p:
        members_from: api
        members: [{{range .Seed}}"{{.}}", {{end}}]
`

// TestReloadUnderLoad sends requests without pause while the configuration
// is reloaded 200 times and the members replaced 200 times: no request may
// fail, and generations and counters must add up.
func TestReloadUnderLoad(t *testing.T) {
	var backends []*backend
	for i := range 3 {
		backends = append(backends, startBackend(t, echo(fmt.Sprint(i))))
	}
	td := startDaemon(t, apiPoolConfig, map[string]any{"Seed": []string{backends[0].addr}, "Version": 0})
	startGen := td.current.Load().number

	ctx, cancel := context.WithCancel(context.Background())
	var sent, failed atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client()
			for ctx.Err() == nil {
				status, body, err := send(t, c, td, http.MethodGet, "/", nil)
				sent.Add(1)
				if err != nil || status != 200 {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %q %v", status, body, err))
				}
			}
		}()
	}
	for i := 1; i <= 200; i++ {
		td.write(t, apiPoolConfig, map[string]any{"Seed": []string{backends[2].addr}, "Version": i})
		if _, err := td.admin.Reload(ctx); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
		// Member 0 stays throughout; the other alternates.
		members := []config.Member{{Address: backends[0].addr}, {Address: backends[1+i%2].addr, Weight: 2}}
		if err := td.admin.SetMembers(ctx, "p", members); err != nil {
			t.Fatalf("member update %d: %v", i, err)
		}
	}
	cancel()
	wg.Wait()

	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests failed during reloads; first: %v", n, sent.Load(), firstFailure.Load())
	}
	t.Logf("%d requests during 200 reloads and 200 member updates", sent.Load())
	if got := td.current.Load().number; got != startGen+200 {
		t.Errorf("generation %d, want %d", got, startGen+200)
	}
	if _, body, _ := get(t, client(), td.url("http")+"/version", "app.test"); body != "v200" {
		t.Errorf("the last configuration answers %q, want v200", body)
	}
	p, ok := td.Pool("p")
	if !ok {
		t.Fatal("pool p is gone")
	}
	if p.InFlight != 0 {
		t.Errorf("%d requests still counted in flight", p.InFlight)
	}
	// The members set by the last update survive reloads: the seed of an
	// existing api pool is ignored.
	if p.MemberCount != 2 {
		t.Errorf("pool has %d members, want the 2 of the last update", p.MemberCount)
	}
	// Counters live by member address: member 0 was never removed, so its
	// counter saw every request it served, across all 400 changes.
	for _, m := range p.Members {
		if m.Address == backends[0].addr && int64(m.Requests) != backends[0].requests.Load() {
			t.Errorf("member 0 counted %d tries, it served %d", m.Requests, backends[0].requests.Load())
		}
	}
}

func TestSeedOnlyForNewPools(t *testing.T) {
	a := startBackend(t, echo("a"))
	b := startBackend(t, echo("b"))
	td := startDaemon(t, apiPoolConfig, map[string]any{"Seed": []string{a.addr}, "Version": 1})
	c := client()
	if _, body, _ := get(t, c, td.url("http")+"/", "app.test"); !strings.HasPrefix(body, "a ") {
		t.Fatalf("seeded pool answered %q, want member a", body)
	}
	if err := td.admin.SetMembers(context.Background(), "p", []config.Member{{Address: b.addr}}); err != nil {
		t.Fatal(err)
	}
	td.write(t, apiPoolConfig, map[string]any{"Seed": []string{a.addr}, "Version": 2})
	td.reload(t)
	if _, body, _ := get(t, c, td.url("http")+"/", "app.test"); !strings.HasPrefix(body, "b ") {
		t.Errorf("after a reload the pool answered %q, want member b set through the API", body)
	}
	if err := td.admin.SetMembers(context.Background(), "p", nil); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := get(t, c, td.url("http")+"/", "app.test"); status != 503 {
		t.Errorf("empty pool answered %d, want 503", status)
	}
}

// TestRefusedReloadKeepsServing loads every class of bad file and checks
// each is refused with the reason while the last good configuration serves.
func TestRefusedReloadKeepsServing(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	good := td.current.Load().number
	busy := busyAddress(t)
	cases := []struct {
		name, config, want string
	}{
		{"unknown key", poolConfig + "        retrys: 3\n", `line 22: unknown field "retrys" in pool`},
		{"wrong type", strings.Replace(poolConfig, "domains: [app.test]", "domains: app.test", 1), `line 13: "app.test" is a string, want a list`},
		{"invalid value", poolConfig + "        retries: 11\n", "tenants.t.pools.p.retries: must be 0..10"},
		{"missing certificate file", strings.Replace(poolConfig, "domains: [app.test]", "domains: [app.test]\n        tls: {cert_file: /nonexistent.pem, key_file: /nonexistent.key}", 1), "tenants.t.applications.app.tls: "},
		{"listener address in use", strings.Replace(poolConfig, `http: {address: "127.0.0.1:0"}`, `http: {address: "{{.Busy}}"}`, 1), "server.listeners.http.address: cannot listen on " + busy + ": address already in use"},
		{"not YAML", "{{.Dir}}: [unclosed", "did not find expected"},
		{"empty", "", "the configuration is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td.write(t, tc.config, map[string]any{"Members": []string{b.addr}, "Busy": busy})
			_, err := td.admin.Reload(context.Background())
			var refused *admin.ConfigError
			if !errors.As(err, &refused) {
				t.Fatalf("reload: %v, want a refusal", err)
			}
			if !strings.Contains(strings.Join(refused.Problems, "\n"), tc.want) {
				t.Errorf("problems %q, want one containing %q", refused.Problems, tc.want)
			}
			if status, _, _ := get(t, client(), td.url("http")+"/", "app.test"); status != 200 {
				t.Errorf("after a refused reload: status %d, want 200 from the previous configuration", status)
			}
			if got := td.current.Load().number; got != good {
				t.Errorf("generation %d, want %d", got, good)
			}
		})
	}
	if !strings.Contains(scrape(t, td), "ramjet_reload_failures_total 7") {
		t.Error("ramjet_reload_failures_total is not 7")
	}
}

func TestAdminAPIErrors(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.socket)
	}}}
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"unknown pool", "PUT", "/v1/upstreams/nope", `{"members": []}`, 404, `no pool \"nope\"`},
		{"static pool", "PUT", "/v1/upstreams/p", `{"members": []}`, 409, "members_from: static"},
		{"not JSON", "PUT", "/v1/upstreams/p", `members`, 400, "the body must be"},
		{"unknown field", "PUT", "/v1/upstreams/p", `{"members": [], "extra": 1}`, 400, `extra: unknown field`},
		{"no members", "PUT", "/v1/upstreams/p", `{}`, 400, `members: is required`},
		{"loopback member", "PUT", "/v1/upstreams/p", `{"members": [{"address": "127.0.0.1:8081"}]}`, 400, `members[0].address: \"127.0.0.1:8081\": 127.0.0.1 is a loopback address`},
		{"bad address", "PUT", "/v1/upstreams/p", `{"members": [{"address": "10.0.0.1"}]}`, 400, "members[0].address"},
		{"bad weight", "PUT", "/v1/upstreams/p", `{"members": [{"address": "10.0.0.1:80", "weight": 5000}]}`, 400, "members[0].weight: must be 1..1000"},
		{"two objects", "PUT", "/v1/upstreams/p", `{"members": []} {}`, 400, "one JSON object"},
		{"wrong method", "GET", "/v1/reload", "", 405, ""},
		{"unknown endpoint", "GET", "/v2/things", "", 404, "no such endpoint"},
		{"unknown pool details", "GET", "/v1/upstreams/nope", "", 404, "no pool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://ramjetd"+tc.path, strings.NewReader(tc.body))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	if status, _, _ := get(t, client(), td.url("http")+"/", "app.test"); status != 200 {
		t.Errorf("after bad admin requests: status %d, want 200", status)
	}
}

// TestAPIMembersPassTheAddressRule: members from the admin API, and the
// seeds of api pools, may not point the proxy at itself. A member
// 127.0.0.1:<health port> would otherwise make the public listener answer
// with ramjetd's own /metrics; PUT answers 400 naming the member, and the
// pool stays as it was.
func TestAPIMembersPassTheAddressRule(t *testing.T) {
	td := startDaemon(t, apiPoolConfig, map[string]any{"Strict": true, "Seed": []string{}, "Version": 1})
	_, healthPort, _ := net.SplitHostPort(td.bound.get("health"))
	// The last one is the health listener itself: were it taken, the GET
	// below would get ramjetd's /metrics (and no request goes anywhere
	// else even then).
	for _, host := range []string{"169.254.169.254", "[fe80::1]", "[::1]", "0.0.0.0", "[::ffff:127.0.0.1]", "127.0.0.1"} {
		member := host + ":" + healthPort
		err := td.admin.SetMembers(context.Background(), "p", []config.Member{{Address: member}})
		var ae *admin.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, `members[0].address: "`+member+`"`) {
			t.Errorf("PUT a member %s: %v, want 400 naming members[0].address and the member", member, err)
		}
	}
	if p, _ := td.Pool("p"); p.MemberCount != 0 {
		t.Errorf("after refused updates the pool has %d members, want 0", p.MemberCount)
	}
	status, body, _ := get(t, client(), td.url("http")+"/metrics", "app.test")
	if status != http.StatusServiceUnavailable || strings.Contains(body, "ramjet_") {
		t.Errorf("GET /metrics on the public listener: %d %q, want 503 from the empty pool", status, body)
	}

	// A seed of an api pool passes the same rule: the file is refused.
	td.write(t, apiPoolConfig, map[string]any{"Strict": true, "Seed": []string{"127.0.0.1:" + healthPort}, "Version": 2})
	_, err := td.admin.Reload(context.Background())
	var refused *admin.ConfigError
	if !errors.As(err, &refused) || !strings.Contains(strings.Join(refused.Problems, "\n"), `tenants.t.pools.p.members[0].address: "127.0.0.1:`+healthPort+`": 127.0.0.1 is a loopback address`) {
		t.Errorf("reload with a loopback seed: %v, want it refused naming the seed", err)
	}
}

func TestAdminSocketMode(t *testing.T) {
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{closedAddr(t)}})
	fi, err := os.Stat(td.socket)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("admin socket mode %o, want 600", perm)
	}
	st, err := td.admin.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Generation != 1 || len(st.ConfigDigest) != 64 || !st.Ready || st.Listeners["http"] == "" || time.Since(st.LoadedAt) > time.Minute {
		t.Errorf("status %+v", st)
	}
}

// scrape returns the health listener's /metrics.
func scrape(t *testing.T, td *testDaemon) string {
	t.Helper()
	resp, err := http.Get("http://" + td.bound.get("health") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestRefusedReloadLeavesNoMetrics checks that a refused file's
// applications and pools leave no metric series behind.
func TestRefusedReloadLeavesNoMetrics(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	// Valid, but refused when compiled: its certificate file is missing.
	ghost := poolConfig + `      ghostpool: {members: ["127.0.0.1:1"]}
  other:
    applications:
      ghost:
        domains: [ghost.test]
        tls: {cert_file: /nonexistent/ghost.crt, key_file: /nonexistent/ghost.key}
        routes: [{match: {path: {prefix: /}}, action: {pool: ghostpool2}}]
    pools:
      ghostpool2: {members: ["127.0.0.1:1"]}
`
	td.write(t, ghost, map[string]any{"Members": []string{b.addr}})
	if _, err := td.admin.Reload(context.Background()); err == nil {
		t.Fatal("the reload was accepted, want a refusal")
	}
	td.write(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	td.reload(t)
	if m := scrape(t, td); strings.Contains(m, "ghost") {
		t.Errorf("metrics name the refused file's application or pool:\n%s", grepLines(m, "ghost"))
	}
}

func grepLines(text, word string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
