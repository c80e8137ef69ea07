package daemon

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// policyBackend answers with what it received: method, path, the headers
// a test asks about.
func policyBackend(t *testing.T) *backend {
	return startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Server", "backend/1.0")
		w.Header().Set("Access-Control-Allow-Origin", "https://member-says.test")
		fmt.Fprintf(w, "%s %s auth=%q env=%q len=%d", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("X-Env"), len(body))
	})
}

// htpasswd writes an htpasswd file with user "alice", password "secret".
func htpasswd(t testing.TB, dir string) string {
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, "htpasswd", []byte("# users\nalice:"+string(hash)+"\n"))
}

// chainConfig has an application with app_root and HTTPS redirect, one
// route carrying every policy, so that the order in which they answer can be
// observed, and a route whose action is a redirect.
const chainConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
    https: {address: "127.0.0.1:0", tls: {}}
  admin: {socket: "{{.Dir}}/admin.sock"}
  trusted_proxies: [127.0.0.0/8]
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        https_redirect: true
        app_root: /home
        routes:
          - match: {path: {regex: "/api/(v[0-9]+)/(.*)"}}
            action: {pool: p}
            policies:
              deny: [203.0.113.0/24]
              cors: {allow_origins: ["https://web.test"], allow_credentials: true}
              basic_auth: {file: "{{.Htpasswd}}", realm: "staff only"}
              max_body: 1k
              rewrite: {path: "/$1/$2"}
              request_headers: {set: [{name: X-Env, value: prod}]}
              response_headers: {remove: [Server]}
          - match: {path: {exact: /}}
            action: {pool: p}
          - match: {path: {prefix: /moved}}
            action: {redirect: {url: "https://elsewhere.test/", code: 301}}
    pools:
      p: {members: ["{{.Member}}"]}
`

// TestPolicyChainOrder observes, request by request, that each policy
// answers before the ones after it in the documented chain.
func TestPolicyChainOrder(t *testing.T) {
	b := policyBackend(t)
	dir := t.TempDir()
	td := startDaemon(t, chainConfig, map[string]any{"Member": b.addr, "Htpasswd": htpasswd(t, dir)})
	creds := "Basic YWxpY2U6c2VjcmV0" // alice:secret
	type req struct {
		listener, method, path string
		headers                map[string]string
		body                   string
	}
	cases := []struct {
		name       string
		req        req
		status     int
		wantHeader map[string]string
		wantBody   string
		reachesB   bool
	}{
		{"app_root answers / before its route and the HTTPS redirect", req{"http", "GET", "/", nil, ""}, 302,
			map[string]string{"Location": "http://app.test/home"}, "", false},
		{"a redirect action answers before the HTTPS redirect", req{"http", "GET", "/moved/x", nil, ""}, 301,
			map[string]string{"Location": "https://elsewhere.test/"}, "", false},
		{"the HTTPS redirect answers before deny", req{"http", "GET", "/api/v1/x", map[string]string{"X-Forwarded-For": "203.0.113.7"}, ""}, 308,
			map[string]string{"Location": "https://app.test/api/v1/x"}, "", false},
		{"deny answers before a CORS preflight", req{"https", "OPTIONS", "/api/v1/x", map[string]string{"X-Forwarded-For": "203.0.113.7", "Origin": "https://web.test"}, ""}, 403,
			nil, "", false},
		{"a CORS preflight answers before basic auth", req{"https", "OPTIONS", "/api/v1/x", map[string]string{"Origin": "https://web.test", "Access-Control-Request-Method": "PUT"}, ""}, 204,
			map[string]string{"Access-Control-Allow-Origin": "https://web.test", "Access-Control-Allow-Credentials": "true"}, "", false},
		{"basic auth answers before the body limit", req{"https", "POST", "/api/v1/x", nil, strings.Repeat("x", 2048)}, 401,
			map[string]string{"Www-Authenticate": `Basic realm="staff only"`}, "", false},
		{"the body limit answers before the member", req{"https", "POST", "/api/v1/x", map[string]string{"Authorization": creds}, strings.Repeat("x", 2048)}, 413,
			nil, "", false},
		{"then rewrite, header changes and the member; CORS on the answer", req{"https", "GET", "/api/v2/users/7?q=1", map[string]string{"Authorization": creds, "Origin": "https://web.test"}, ""}, 200,
			map[string]string{"Access-Control-Allow-Origin": "https://web.test", "Server": ""}, `GET /v2/users/7?q=1 auth="" env="prod" len=0`, true},
	}
	c := client()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := b.requests.Load()
			r, _ := http.NewRequest(tc.req.method, td.url(tc.req.listener)+tc.req.path, strings.NewReader(tc.req.body))
			r.Host = "app.test"
			for k, v := range tc.req.headers {
				r.Header.Set(k, v)
			}
			resp, err := c.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, tc.status)
			}
			for k, v := range tc.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if tc.wantBody != "" && string(body) != tc.wantBody {
				t.Errorf("body %q, want %q", body, tc.wantBody)
			}
			if reached := b.requests.Load() > before; reached != tc.reachesB {
				t.Errorf("the member was reached: %t, want %t", reached, tc.reachesB)
			}
		})
	}
}

// TestRouteTimeouts checks that a route's own response timeout applies
// while another route of the same pool keeps the pool's.
func TestRouteTimeouts(t *testing.T) {
	slow := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers while the client waits
	})
	fast := startBackend(t, echo("fast"))
	td := startDaemon(t, baseConfig+`
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /impatient}}
            action: {pool: slow}
            policies: {timeouts: {response: 100ms}}
          - match: {path: {prefix: /fast}}
            action: {pool: fast}
            policies: {timeouts: {connect: 1s}}
    pools:
      slow: {members: ["{{.Slow}}"], response_timeout: 1h}
      fast: {members: ["{{.Fast}}"]}
`, map[string]any{"Slow": slow.addr, "Fast": fast.addr})
	if status, body, _ := get(t, client(), td.url("http")+"/impatient", "app.test"); status != 504 {
		t.Errorf("route with a 100ms response timeout: %d %q, want 504", status, body)
	}
	if status, _, _ := get(t, client(), td.url("http")+"/fast", "app.test"); status != 200 {
		t.Errorf("route with its own connect timeout: %d, want 200", status)
	}
}

// TestSourceRangesThroughTrustedProxy checks that the allow list sees the
// client address from X-Forwarded-For when the peer is trusted, and the peer
// otherwise.
func TestSourceRangesThroughTrustedProxy(t *testing.T) {
	b := policyBackend(t)
	config := `
server:
  listeners: {http: {address: "127.0.0.1:0"}}
  admin: {socket: "{{.Dir}}/admin.sock"}
  {{if .Trusted}}trusted_proxies: [127.0.0.0/8]{{end}}
` + oneRoute(`{allow: [198.51.100.0/24, "2001:db8::/32"]}`)
	cases := []struct {
		name    string
		trusted bool
		xff     string
		status  int
	}{
		{"trusted peer, allowed client", true, "198.51.100.4", 200},
		{"trusted peer, allowed IPv6 client", true, "2001:db8::1", 200},
		{"trusted peer, other client", true, "192.0.2.1", 403},
		{"untrusted peer claiming an allowed client", false, "198.51.100.4", 403},
		{"trusted peer, client with a port", true, "198.51.100.4:4444", 200},
		{"trusted peer, IPv6 client with a port", true, "[2001:db8::1]:443", 200},
		{"trusted peer, client behind another trusted hop with a port", true, "198.51.100.7, 127.0.0.5:80", 200},
		{"trusted peer, client unknown", true, "unknown", 403},
		{"trusted peer, garbage after a trusted hop", true, "garbage, 127.0.0.5", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := startDaemon(t, config, map[string]any{"Member": b.addr, "Trusted": tc.trusted})
			resp := rawRequest(t, td.bound.get("http"), "GET / HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-For: "+tc.xff+"\r\nConnection: close\r\n\r\n")
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// oneRoute is a tenant whose application app.test sends every path to the
// pool of the template's {{.Member}}, with policies (a YAML flow map).
func oneRoute(policies string) string {
	return `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
            policies: ` + policies + `
    pools:
      p: {members: ["{{.Member}}"]}
`
}

// satisfyServer is the server of the satisfy tests: plain HTTP, the client
// address from X-Forwarded-For of a loopback peer, and loopback members
// allowed for the tests' authentication service.
const satisfyServer = `
server:
  listeners: {http: {address: "127.0.0.1:0"}}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: true}
  trusted_proxies: [127.0.0.0/8]
`

// TestSatisfy: with satisfy any an address the allow list permits needs no
// credentials and one it refuses may sign in (401 when it does not, as
// nginx answers); with all (the default) both must pass. The member never
// sees the Authorization header either way.
func TestSatisfy(t *testing.T) {
	b := policyBackend(t)
	dir := t.TempDir()
	config := satisfyServer + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /any}}
            action: {pool: p}
            policies: {allow: [198.51.100.0/24], basic_auth: {file: "{{.Htpasswd}}", realm: r}, satisfy: any}
          - match: {path: {prefix: /all}}
            action: {pool: p}
            policies: {allow: [198.51.100.0/24], basic_auth: {file: "{{.Htpasswd}}", realm: r}}
    pools:
      p: {members: ["{{.Member}}"]}
`
	td := startDaemon(t, config, map[string]any{"Member": b.addr, "Htpasswd": htpasswd(t, dir)})
	good := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:secret"))
	bad := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:wrong"))
	for _, tc := range []struct {
		name, path, client, auth string
		status                   int
	}{
		{"any: permitted address, no credentials", "/any", "198.51.100.4", "", 200},
		{"any: permitted address, wrong credentials", "/any", "198.51.100.4", bad, 200},
		{"any: refused address signs in", "/any", "192.0.2.1", good, 200},
		{"any: refused address, no credentials", "/any", "192.0.2.1", "", 401},
		{"any: refused address, wrong credentials", "/any", "192.0.2.1", bad, 401},
		{"all: permitted address, no credentials", "/all", "198.51.100.4", "", 401},
		{"all: permitted address signs in", "/all", "198.51.100.4", good, 200},
		{"all: refused address signs in", "/all", "192.0.2.1", good, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := "GET " + tc.path + " HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-For: " + tc.client + "\r\nConnection: close\r\n"
			if tc.auth != "" {
				head += "Authorization: " + tc.auth + "\r\n"
			}
			resp := rawRequest(t, td.bound.get("http"), head+"\r\n")
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if tc.status == 200 && !strings.Contains(string(body), `auth=""`) {
				t.Errorf("the member saw credentials: %s", body)
			}
		})
	}
}

// TestSatisfyAnyExternalAuth: with satisfy any an address the allow list
// permits never asks the authentication service; a refused one passes when
// the service says so.
func TestSatisfyAnyExternalAuth(t *testing.T) {
	b := policyBackend(t)
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != "ok" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(auth.Close)
	config := satisfyServer + oneRoute(`{allow: [198.51.100.0/24], external_auth: {url: "{{.Auth}}/check"}, satisfy: any}`)
	td := startDaemon(t, config, map[string]any{"Member": b.addr, "Auth": auth.URL})
	for _, tc := range []struct {
		name, client, token string
		status              int
	}{
		{"permitted address, the service would refuse", "198.51.100.4", "", 200},
		{"refused address, the service agrees", "192.0.2.1", "ok", 200},
		{"refused address, the service refuses", "192.0.2.1", "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := "GET / HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-For: " + tc.client + "\r\nX-Token: " + tc.token + "\r\nConnection: close\r\n\r\n"
			resp := rawRequest(t, td.bound.get("http"), head)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// TestBadPolicyFiles checks that a missing or weak htpasswd file refuses
// the reload with the field path and never shows the file's content.
func TestBadPolicyFiles(t *testing.T) {
	b := policyBackend(t)
	dir := t.TempDir()
	good := htpasswd(t, dir)
	config := baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
            policies: {basic_auth: {file: "{{.File}}"}}
    pools:
      p: {members: ["{{.Member}}"]}
`
	td := startDaemon(t, config, map[string]any{"Member": b.addr, "File": good})
	cases := []struct{ name, content, want string }{
		{"plain text password", "bob:hunter2\n", "line 1"},
		{"SHA1", "bob:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n", "line 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, "bad", []byte(tc.content))
			td.write(t, config, map[string]any{"Member": b.addr, "File": file})
			_, err := td.admin.Reload(t.Context())
			if err == nil || !strings.Contains(err.Error(), "tenants.t.applications.app.routes[0].policies.basic_auth.file") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("reload: %v, want a refusal naming the field and %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "bob") || strings.Contains(err.Error(), "5en6G6") {
				t.Errorf("the refusal shows the file's content: %v", err)
			}
		})
	}
	// The previous configuration still requires the password.
	if status, _, _ := get(t, client(), td.url("http")+"/", "app.test"); status != 401 {
		t.Errorf("after refused reloads: status %d, want 401 from the last good configuration", status)
	}
}

// FuzzPolicyChain sends arbitrary requests through a route carrying every
// policy and ending in the proxy (whose only member refuses connections, so
// every request ends quickly): no policy may panic, whatever the request
// holds.
func FuzzPolicyChain(f *testing.F) {
	f.Add("GET /api/v1/x HTTP/1.1\r\nHost: app.test\r\nAuthorization: Basic YWxpY2U6c2VjcmV0\r\nOrigin: https://web.test\r\n\r\n")
	f.Add("OPTIONS /api/v1/x HTTP/1.1\r\nHost: app.test\r\nOrigin: https://a.web.test\r\nX-Forwarded-For: 203.0.113.7, ::1\r\n\r\n")
	f.Add("POST /api/v9/%00 HTTP/1.1\r\nHost: app.test\r\nContent-Length: 3\r\nAuthorization: Basic !!!\r\n\r\nabc")
	f.Add("GET / HTTP/1.1\r\nHost: APP.test.:80\r\nCookie: a=b;;=;c\r\nX-Forwarded-Proto: https\r\n\r\n")
	dir := f.TempDir()
	td := startDaemon(f, `
server:
  listeners: {http: {address: "127.0.0.1:0"}}
  trusted_proxies: [127.0.0.0/8, "::1/128"]
tenants:
  t:
    applications:
      app:
        domains: [app.test, "*.app.test", "*"]
        https_redirect: true
        app_root: /home
        routes:
          - match: {path: {regex: "/api/(v[0-9]+)/(.*)"}, headers: [{name: X-A, regex: "a.*"}]}
            action: {respond: {status: 200, body: "matched"}}
          - match: {path: {regex: "/api/(v[0-9]+)/(.*)"}}
            action: {pool: closed}
            policies:
              allow: [127.0.0.0/8, "::1/128", 198.51.100.0/24]
              deny: [203.0.113.0/24]
              cors: {allow_origins: ["https://web.test", "https://*.web.test"], allow_credentials: true}
              basic_auth: {file: "{{.Htpasswd}}", realm: "r"}
              max_body: 1k
              rewrite: {path: "/$2/$1", host: b.test}
              request_headers: {set: [{name: X-Env, value: prod}], remove: [Cookie]}
              response_headers: {add: [{name: X-Served, value: "1"}]}
    pools:
      closed: {members: ["127.0.0.1:1"], retries: 0}
`, map[string]any{"Htpasswd": htpasswd(f, dir)})
	h := &entry{d: td.Daemon, listener: "http", port: "80"}
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			return
		}
		r.RemoteAddr = "127.0.0.1:5000"
		h.ServeHTTP(httptest.NewRecorder(), r)
	})
}

// TestHTTPSRedirectBehindProxy checks that the scheme a trusted proxy
// reports counts for the HTTPS redirect, and that anyone else's does not.
func TestHTTPSRedirectBehindProxy(t *testing.T) {
	b := policyBackend(t)
	config := `
server:
  listeners: {http: {address: "127.0.0.1:0"}}
  {{if .Trusted}}trusted_proxies: [127.0.0.0/8]{{end}}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        https_redirect: true
        routes: [{match: {path: {prefix: /}}, action: {pool: p}}]
    pools:
      p: {members: ["{{.Member}}"]}
`
	for _, trusted := range []bool{true, false} {
		t.Run(fmt.Sprintf("trusted=%t", trusted), func(t *testing.T) {
			td := startDaemon(t, config, map[string]any{"Member": b.addr, "Trusted": trusted})
			resp := rawRequest(t, td.bound.get("http"), "GET /x HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n")
			resp.Body.Close()
			want := 308
			if trusted {
				want = 200
			}
			if resp.StatusCode != want {
				t.Errorf("status %d, want %d", resp.StatusCode, want)
			}
		})
	}
}
