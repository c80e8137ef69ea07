package daemon

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// proxyKeysConfig has the policies of ingress-nginx's proxy-* keys: retry
// conditions, response rewrites, buffering and a send timeout.
const proxyKeysConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /next-404}}
            action: {pool: p}
            policies: {retry: {codes: [404], attempts: 2, failures: {error: true}}}
          - match: {path: {prefix: /no-404}}
            action: {pool: p}
            policies: {retry: {codes: [500], attempts: 2, failures: {error: true}}}
          - match: {path: {prefix: /rewrite}}
            action: {pool: p}
            policies:
              response_rewrite:
                redirects: [{from: "http://members.internal/", to: "/app/"}]
                cookie_domains: [{from: members.internal, to: app.test}]
              buffering: {request: true, response: true, head_bytes: 4096}
              timeouts: {send: 2s}
    pools:
      p: {members: ["{{.Member}}"]}
`

func TestProxyKeyPolicies(t *testing.T) {
	var hits atomic.Int64
	member := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/next-404", "/no-404":
			if hits.Add(1)%2 == 1 {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			io.WriteString(w, "second")
		case "/rewrite":
			w.Header().Set("Location", "http://members.internal/login")
			w.Header().Set("Set-Cookie", "s=1; Domain=.members.internal; Path=/")
			w.WriteHeader(http.StatusFound)
		}
	})
	td := startDaemon(t, proxyKeysConfig, map[string]any{"Member": member.addr})
	c := client()
	status, body, _ := get(t, c, td.url("http")+"/next-404", "app.test")
	if status != 200 || body != "second" {
		t.Errorf("/next-404: %d %q, want 200 \"second\" (404 tried again)", status, body)
	}
	status, _, _ = get(t, c, td.url("http")+"/no-404", "app.test")
	if status != 404 {
		t.Errorf("/no-404: %d, want 404 (not listed, passed on)", status)
	}
	status, _, header := get(t, c, td.url("http")+"/rewrite", "app.test")
	if status != 302 || header.Get("Location") != "/app/login" || header.Get("Set-Cookie") != "s=1; Domain=.app.test; Path=/" {
		t.Errorf("/rewrite: %d Location %q Set-Cookie %q", status, header.Get("Location"), header.Get("Set-Cookie"))
	}
}
