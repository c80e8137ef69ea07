package daemon

import (
	"crypto/tls"
	"strings"
	"testing"
)

const routingConfig = baseConfig + `
tenants:
  shop:
    applications:
      www:
        domains: [www.example.com]
        routes:
          - match: {path: {prefix: /api}}
            action: {pool: api}
          - match: {path: {exact: /exact}}
            action: {respond: {status: 200, body: "exact route"}}
          - match: {path: {prefix: /old}}
            action: {redirect: {url: "https://new.example.com/", code: 308}}
          - match: {path: {prefix: /}}
            action: {pool: web}
      wild:
        domains: ["*.example.com"]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: web}
      api-only:
        domains: [api.example.com]
        routes:
          - match: {path: {regex: "/v[0-9]+/.*"}}
            action: {pool: api}
      secure:
        domains: [secure.example.com]
        https_redirect: true
        routes:
          - match: {path: {prefix: /}}
            action: {pool: web}
          - match: {path: {prefix: /.well-known/acme-challenge}}
            action: {pool: web}
    pools:
      api: {members: ["{{.API}}"]}
      web: {members: ["{{.Web}}"]}
`

func TestRouting(t *testing.T) {
	api := startBackend(t, echo("api"))
	web := startBackend(t, echo("web"))
	td := startDaemon(t, routingConfig, map[string]any{"API": api.addr, "Web": web.addr})
	c := client()
	cases := []struct {
		name, host, path string
		status           int
		body             string // prefix of the body
	}{
		{"prefix route", "www.example.com", "/api/users", 200, "api GET /api/users"},
		{"prefix is whole segments", "www.example.com", "/apis", 200, "web GET /apis"},
		{"exact route", "www.example.com", "/exact", 200, "exact route"},
		{"exact is exact", "www.example.com", "/exact/x", 200, "web GET /exact/x"},
		{"root prefix", "www.example.com", "/", 200, "web GET /"},
		{"host is case insensitive, port ignored", "WWW.Example.com:8080", "/api", 200, "api GET /api"},
		{"query kept", "www.example.com", "/api?a=1&b=%20", 200, "api GET /api?a=1&b=%20"},
		{"path normalised for matching, forwarded as sent", "www.example.com", "/x/../api/v1", 200, "api GET /x/../api/v1"},
		{"encoded slash forwarded as sent", "www.example.com", "/api/group%2Fproject", 200, "api GET /api/group%2Fproject"},
		{"wildcard host", "shop.example.com", "/", 200, "web GET /"},
		{"wildcard is one label", "a.b.example.com", "/", 404, "Not Found: no application serves this host"},
		{"unknown host", "other.test", "/", 404, "Not Found: no application serves this host"},
		{"exact host without matching path does not fall to wildcard", "api.example.com", "/nothing", 404, "Not Found: no route"},
		{"regex route", "api.example.com", "/V2/items", 200, "api GET /V2/items"},
		{"redirect action", "www.example.com", "/old/page", 308, ""},
		{"https redirect", "secure.example.com", "/a/b?c=d", 308, ""},
		{"dot-segments above root", "www.example.com", "/../etc/passwd", 400, "Bad Request"},
		{"NUL in path", "www.example.com", "/a%00b", 400, "Bad Request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body, header := rawGet(t, td.bound.get("http"), tc.host, tc.path)
			if status != tc.status || !strings.HasPrefix(body, tc.body) {
				t.Fatalf("got %d %q, want %d %q...", status, body, tc.status, tc.body)
			}
			switch tc.name {
			case "redirect action":
				if loc := header.Get("Location"); loc != "https://new.example.com/" {
					t.Errorf("Location %q", loc)
				}
			case "https redirect":
				if loc := header.Get("Location"); loc != "https://secure.example.com/a/b?c=d" {
					t.Errorf("Location %q", loc)
				}
			}
		})
	}
	t.Run("https listener serves the secure host", func(t *testing.T) {
		status, body, _ := get(t, c, td.url("https")+"/x", "secure.example.com")
		if status != 200 || body != "web GET /x 0" {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("a route serving ACME challenges is not redirected", func(t *testing.T) {
		status, body, _ := rawGet(t, td.bound.get("http"), "secure.example.com", "/.well-known/acme-challenge/token")
		if status != 200 || !strings.HasPrefix(body, "web GET /.well-known/acme-challenge/token") {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("default certificate is the fake one", func(t *testing.T) {
		conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{InsecureSkipVerify: true, ServerName: "www.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "Ramjet Ingress Controller Fake Certificate" {
			t.Errorf("common name %q", cn)
		}
	})
}
