package daemon

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// matchConfig routes by method and query parameters, as the Gateway API's
// HTTPRouteMethodMatching and HTTPRouteQueryParamMatching tests do.
const matchConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: main}
          - match: {path: {prefix: /}, method: POST}
            action: {pool: post}
          - match: {path: {prefix: /}, query: [{name: animal, exact: whale}, {name: id, regex: "[0-9]+"}]}
            action: {pool: query}
    pools:
      main: {members: ["{{.Main}}"]}
      post: {members: ["{{.Post}}"]}
      query: {members: ["{{.Query}}"]}
`

func TestMethodAndQueryRouting(t *testing.T) {
	main, post, query := startBackend(t, echo("main")), startBackend(t, echo("post")), startBackend(t, echo("query"))
	td := startDaemon(t, matchConfig, map[string]any{"Main": main.addr, "Post": post.addr, "Query": query.addr})
	c := client()
	cases := []struct {
		name, method, target, want string
	}{
		{"GET goes to main", http.MethodGet, "/x", "main GET /x 0"},
		{"POST goes to post", http.MethodPost, "/x", "post POST /x 0"},
		{"query matches, query forwarded as sent", http.MethodGet, "/x?id=7&animal=whale", "query GET /x?id=7&animal=whale 0"},
		{"first value counts", http.MethodGet, "/x?animal=dolphin&animal=whale&id=7", "main GET /x?animal=dolphin&animal=whale&id=7 0"},
		{"names are case-sensitive", http.MethodGet, "/x?Animal=whale&id=7", "main GET /x?Animal=whale&id=7 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, td.url("http")+tc.target, nil)
			req.Host = "app.test"
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || string(body) != tc.want {
				t.Errorf("got %d %q, want 200 %q", resp.StatusCode, body, tc.want)
			}
		})
	}
}

// pathConfig has the Gateway API's redirects and rewrites.
const pathConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /original-prefix}}
            action: {redirect: {path_prefix: /replacement-prefix, code: 302}}
          - match: {path: {prefix: /to-https}}
            action: {redirect: {scheme: https, hostname: example.org}}
          - match: {path: {prefix: /same-scheme}}
            action: {redirect: {hostname: example.org, code: 307}}
          - match: {path: {prefix: /legacy}}
            action: {redirect: {url: "https://example.com/fixed", code: 308}}
          - match: {path: {prefix: /prefix/one}}
            action: {pool: p}
            policies: {rewrite: {path_prefix: /one}}
          - match: {path: {prefix: /strip-prefix}}
            action: {pool: p}
            policies: {rewrite: {path_prefix: /}}
          - match: {path: {prefix: /full/one}}
            action: {pool: p}
            policies: {rewrite: {path: /one, host: rewritten.test}}
    pools:
      p: {members: ["{{.Member}}"]}
`

func TestRedirectsAndRewrites(t *testing.T) {
	member := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Host+" "+r.URL.RequestURI())
	})
	td := startDaemon(t, pathConfig, map[string]any{"Member": member.addr})
	_, port, _ := net.SplitHostPort(td.bound.get("http"))
	c := client()
	cases := []struct {
		target   string
		status   int
		location string
		body     string
	}{
		{"/original-prefix/lemon?x=1", 302, "http://app.test:" + port + "/replacement-prefix/lemon?x=1", ""},
		{"/to-https/a", 301, "https://example.org/to-https/a", ""},
		{"/same-scheme/a", 307, "http://example.org:" + port + "/same-scheme/a", ""},
		{"/legacy/a?q", 308, "https://example.com/fixed", ""},
		{"/prefix/one/two?q=1", 200, "", "app.test /one/two?q=1"},
		{"/strip-prefix/three", 200, "", "app.test /three"},
		{"/strip-prefix", 200, "", "app.test /"},
		{"/full/one/two", 200, "", "rewritten.test /one"},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			status, body, header := get(t, c, td.url("http")+tc.target, "app.test")
			if status != tc.status || header.Get("Location") != tc.location || (tc.body != "" && body != tc.body) {
				t.Errorf("got %d Location %q body %q; want %d %q %q", status, header.Get("Location"), body, tc.status, tc.location, tc.body)
			}
		})
	}
}

// timeoutMirrorConfig has the Gateway API's request and backend request
// timeouts, a retry policy and a mirror.
const timeoutMirrorConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /request-timeout}}
            action: {pool: p}
            policies: {timeouts: {request: 500ms}}
          - match: {path: {prefix: /backend-timeout}}
            action: {pool: p}
            policies: {timeouts: {backend_request: 500ms}}
          - match: {path: {prefix: /retry}}
            action: {pool: p}
            policies: {retry: {codes: [500], attempts: 2, backoff: 10ms}}
          - match: {path: {prefix: /mirror}}
            action: {pool: p}
            policies: {mirrors: [{pool: shadow}, {pool: shadow, fraction: {numerator: 0}}]}
    pools:
      p: {members: ["{{.Member}}"]}
      shadow: {members: ["{{.Shadow}}"]}
`

func TestRouteTimeoutsRetriesAndMirrors(t *testing.T) {
	var failures atomic.Int64
	member := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/retry" && failures.Add(1) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if d, err := time.ParseDuration(r.URL.Query().Get("delay")); err == nil {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(d):
			}
		}
		io.WriteString(w, "main")
	})
	mirrored := make(chan string, 4)
	shadow := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		mirrored <- r.Method + " " + r.Host + " " + r.URL.RequestURI()
		io.WriteString(w, "shadow")
	})
	td := startDaemon(t, timeoutMirrorConfig, map[string]any{"Member": member.addr, "Shadow": shadow.addr})
	c := client()
	cases := []struct {
		target string
		status int
		body   string
	}{
		{"/request-timeout", 200, "main"},
		{"/request-timeout?delay=2s", 504, ""},
		{"/backend-timeout", 200, "main"},
		{"/backend-timeout?delay=2s", 504, ""},
		{"/mirror?a=1", 200, "main"},
		{"/retry", 200, "main"}, // 500 twice from the pool's one member, then 200
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			start := time.Now()
			status, body, _ := get(t, c, td.url("http")+tc.target, "app.test")
			if status != tc.status || (tc.body != "" && body != tc.body) {
				t.Errorf("got %d %q, want %d %q", status, body, tc.status, tc.body)
			}
			if time.Since(start) > 1500*time.Millisecond {
				t.Errorf("answered after %s", time.Since(start))
			}
		})
	}
	select {
	case got := <-mirrored:
		if got != "GET app.test /mirror?a=1" {
			t.Errorf("the mirror received %q, want GET app.test /mirror?a=1", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the mirror received nothing")
	}
	select {
	case got := <-mirrored:
		t.Errorf("the mirror of fraction 0 received %q", got)
	case <-time.After(200 * time.Millisecond):
	}
}
