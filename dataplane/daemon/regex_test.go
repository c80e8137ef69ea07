package daemon

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
)

// regexConfig has a host with regex routes (one behind a header regex), a
// host with a prefix route, and an input bound of 1 KiB.
const regexConfig = baseConfig + `  limits: {max_regex_input_bytes: {{or .Input "1KiB"}}}
tenants:
  t:
    applications:
      re:
        domains: [re.test]
        routes:
          - match: {path: {regex: "/canary/.*"}, headers: [{name: X-Canary, regex: "yes.*"}]}
            action: {pool: p}
          - match: {path: {regex: "/api/.*"}}
            action: {pool: p}
{{range .Extra}}          - match: {path: {regex: "{{.}}"}}
            action: {pool: p}
{{end}}      plain:
        domains: [plain.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
    pools:
      p:
        members: ["{{.Member}}"]
`

// TestRegexInputBound sends requests over real sockets to a daemon whose
// regexes read at most 1 KiB: a longer path that reaches the regex routes
// is answered 414, header values a regex would read beyond it 431, and the
// member sees neither. The bound is on the normalised path, which the
// regexes see; a host without regex routes serves any path.
func TestRegexInputBound(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, regexConfig, map[string]any{"Member": b.addr})
	longPath := func(head string, n int) string { return head + strings.Repeat("a", n-len(head)) }
	cases := []struct {
		name    string
		request string
		status  int
	}{
		{"path at the bound", "GET " + longPath("/api/", 1024) + " HTTP/1.1\r\nHost: re.test\r\n\r\n", 200},
		{"path over the bound", "GET " + longPath("/api/", 1025) + " HTTP/1.1\r\nHost: re.test\r\n\r\n", 414},
		{"path over the bound matching no route", "GET " + longPath("/none/", 1025) + " HTTP/1.1\r\nHost: re.test\r\n\r\n", 414},
		{"raw path over the bound, normalised within it", "GET /api/" + strings.Repeat("%61", 300) + strings.Repeat("/", 200) + " HTTP/1.1\r\nHost: re.test\r\n\r\n", 200},
		{"dot-segments resolved within the bound", "GET " + longPath("/api/xxxxxxxxxx/../", 1034) + " HTTP/1.1\r\nHost: re.test\r\n\r\n", 200},
		{"query string does not count", "GET /api/x?" + strings.Repeat("q", 4000) + " HTTP/1.1\r\nHost: re.test\r\n\r\n", 200},
		{"host without regex routes", "GET " + longPath("/x/", 8000) + " HTTP/1.1\r\nHost: plain.test\r\n\r\n", 200},
		{"header value at the bound", "GET /canary/x HTTP/1.1\r\nHost: re.test\r\nX-Canary: yes" + strings.Repeat("v", 1021) + "\r\n\r\n", 200},
		{"header value over the bound", "GET /canary/x HTTP/1.1\r\nHost: re.test\r\nX-Canary: " + strings.Repeat("v", 1025) + "\r\n\r\n", 431},
		{"header values over the bound together", "GET /canary/x HTTP/1.1\r\nHost: re.test\r\nX-Canary: " + strings.Repeat("v", 600) + "\r\nX-Canary: " + strings.Repeat("v", 600) + "\r\n\r\n", 431},
		{"long value of another header", "GET /canary/x HTTP/1.1\r\nHost: re.test\r\nX-Other: " + strings.Repeat("v", 4000) + "\r\n\r\n", 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := b.requests.Load()
			resp := rawRequest(t, td.bound.get("http"), tc.request)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d (%.80q), want %d", resp.StatusCode, body, tc.status)
			}
			wantHits := int64(0)
			if tc.status == 200 {
				wantHits = 1
			}
			if hits := b.requests.Load() - before; hits != wantHits {
				t.Errorf("the member saw %d requests, want %d", hits, wantHits)
			}
		})
	}
	t.Run("a 414 counts for the host's application", func(t *testing.T) {
		counter := td.metrics.RequestCounters("t", "re")[4]
		before := testutil.ToFloat64(counter)
		if status, _, _ := rawGet(t, td.bound.get("http"), "re.test", longPath("/api/", 1025)); status != 414 {
			t.Fatalf("status %d, want 414", status)
		}
		if got := testutil.ToFloat64(counter) - before; got != 1 {
			t.Errorf("the application re counted %v answers of class 4xx, want 1", got)
		}
	})
	t.Run("a reload changes the bound", func(t *testing.T) {
		path := longPath("/api/", 1500)
		if status, _, _ := rawGet(t, td.bound.get("http"), "re.test", path); status != 414 {
			t.Fatalf("1500-byte path at 1 KiB: status %d, want 414", status)
		}
		td.write(t, regexConfig, map[string]any{"Member": b.addr, "Input": "2KiB"})
		td.reload(t)
		t.Cleanup(func() {
			td.write(t, regexConfig, map[string]any{"Member": b.addr})
			td.reload(t)
		})
		if status, _, _ := rawGet(t, td.bound.get("http"), "re.test", path); status != 200 {
			t.Errorf("1500-byte path at 2 KiB: status %d, want 200", status)
		}
	})
	t.Run("HTTP/2", func(t *testing.T) {
		c := h2Client(t)
		for path, want := range map[string]int{longPath("/api/", 1024): 200, longPath("/api/", 1025): 414} {
			req, _ := http.NewRequest(http.MethodGet, td.url("https")+path, nil)
			req.Host = "re.test"
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 || resp.StatusCode != want {
				t.Errorf("%d-byte path over %s: status %d (%.80q), want %d over HTTP/2", len(path), resp.Proto, resp.StatusCode, body, want)
			}
		}
	})
}

// TestRegexBudgetRefused reloads a configuration whose host holds more
// regex instructions than one request may run at the input bound: the
// reload is refused with the route and its path named, and the running
// configuration keeps serving.
func TestRegexBudgetRefused(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, regexConfig, map[string]any{"Member": b.addr})
	// At 1 KiB, 4096 instructions fit; each of these compiles to 512, and
	// the first two routes to 32.
	var extra []string
	for _, c := range "abcdefgh" {
		extra = append(extra, "/"+string(c)+"/.{0,253}")
	}
	td.write(t, regexConfig, map[string]any{"Member": b.addr, "Extra": extra})
	_, err := td.admin.Reload(context.Background())
	var refused *admin.ConfigError
	if !errors.As(err, &refused) {
		t.Fatalf("reload: %v, want a refusal", err)
	}
	want := `tenants.t.applications.re.routes[9].match: with the path regex "/h/.{0,253}", the regexes of this application compile to more than the 4096 instructions one request may run`
	if got := strings.Join(refused.Problems, "\n"); !strings.Contains(got, want) {
		t.Errorf("problems:\n%s\nwant one containing\n%s", got, want)
	}
	if status, _, _ := get(t, client(), td.url("http")+"/api/x", "re.test"); status != 200 {
		t.Errorf("after the refused reload: status %d, want 200 from the running configuration", status)
	}
	td.write(t, regexConfig, map[string]any{"Member": b.addr, "Extra": extra[:7]})
	td.reload(t)
	if status, _, _ := get(t, client(), td.url("http")+"/g/x", "re.test"); status != 200 {
		t.Errorf("with seven routes of 512 instructions: status %d, want 200", status)
	}
}
