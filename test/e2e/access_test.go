package e2e

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestCORSPreflight: with enable-cors and an origin list, a preflight from
// a listed origin is answered 204 by ramjetd with ingress-nginx's default
// Access-Control-* values and the Origin echoed; a preflight from another
// origin gets no CORS headers and goes to the backend, as in ingress-nginx
// (its $cors variable stays unset); an actual request from a listed
// origin reaches the backend and its answer carries the echoed origin.
func TestCORSPreflight(t *testing.T) {
	web := startBackend(t, "web", nil)
	rj := start(t, `
{{ingress "api" "api.example.com" "web" "enable-cors" "true" "cors-allow-origin" "https://app.example.com, https://*.example.org"}}
{{service "web" .web}}`, map[string]any{"web": web})

	// The CORS headers of a listed origin: ingress-nginx's defaults, with
	// credentials on (its default for a list of origins).
	allowed := map[string]string{
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Methods":     "GET, PUT, POST, DELETE, PATCH, OPTIONS",
		"Access-Control-Allow-Headers":     "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization",
		"Access-Control-Max-Age":           "1728000",
	}
	preflight := []string{"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "content-type"}
	cases := []struct {
		name, method, origin string
		status               int
		// backend is true when the request must reach the backend.
		backend bool
		// cors is true when the answer must carry the CORS headers with
		// the origin echoed; false when it must carry none.
		cors bool
	}{
		{"preflight from a listed origin", "OPTIONS", "https://app.example.com", http.StatusNoContent, false, true},
		{"preflight from a wildcard origin", "OPTIONS", "https://shop.example.org", http.StatusNoContent, false, true},
		{"preflight from an unlisted origin", "OPTIONS", "https://evil.example.net", 200, true, false},
		{"preflight from an origin that only ends like a listed one", "OPTIONS", "https://app.example.com.evil.net", 200, true, false},
		{"actual request from a listed origin", "GET", "https://app.example.com", 200, true, true},
		{"actual request from an unlisted origin", "GET", "https://evil.example.net", 200, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := web.requests.Load()
			got := rj.do(t, tc.method, "api.example.com", "/things/1", append([]string{"Origin", tc.origin}, preflight...)...)
			if got.status != tc.status {
				t.Fatalf("%s from %s: status %d, want %d (body %q)", tc.method, tc.origin, got.status, tc.status, got.body)
			}
			if reached := web.requests.Load() > before; reached != tc.backend {
				t.Errorf("%s from %s: reached the backend %v, want %v", tc.method, tc.origin, reached, tc.backend)
			}
			if tc.backend && got.backend() != "web" {
				t.Errorf("%s from %s: answered by %q, want the backend web", tc.method, tc.origin, got.backend())
			}
			if got.header.Get("Vary") != "Origin" {
				t.Errorf("%s from %s: Vary %q, want Origin", tc.method, tc.origin, got.header.Get("Vary"))
			}
			if !tc.cors {
				for name := range got.header {
					if strings.HasPrefix(name, "Access-Control-") {
						t.Errorf("%s from %s: %s: %q, want no CORS header", tc.method, tc.origin, name, got.header.Get(name))
					}
				}
				return
			}
			if v := got.header.Get("Access-Control-Allow-Origin"); v != tc.origin {
				t.Errorf("%s from %s: Access-Control-Allow-Origin %q, want the origin echoed", tc.method, tc.origin, v)
			}
			for name, want := range allowed {
				if v := got.header.Get(name); v != want {
					t.Errorf("%s from %s: %s %q, want %q", tc.method, tc.origin, name, v, want)
				}
			}
		})
	}
}

// TestBasicAuth: an htpasswd Secret (auth-secret-type auth-file) guards
// every path. Without credentials or with a wrong password the answer is
// 401 with a WWW-Authenticate challenge naming the realm, and the backend
// is not reached; with the right password the request passes, without its
// Authorization header (ingress-nginx sends proxy_set_header
// Authorization "" as well). With enable-cors too, a preflight is answered
// without credentials, as nginx answers it in the rewrite phase, before
// the access phase; other requests still need them.
func TestBasicAuth(t *testing.T) {
	web := startBackend(t, "web", nil)
	// bcrypt's lowest cost: ramjetd takes any cost up to 14.
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	rj := start(t, `
{{ingress "admin" "admin.example.com" "web" .auth}}
{{ingress "admin-cors" "cors.example.com" "web" .auth "enable-cors" "true"}}
---
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: app}
type: Opaque
data:
  auth: {{b64 .htpasswd}}
{{service "web" .web}}`, map[string]any{
		"web": web, "htpasswd": "alice:" + string(hash) + "\n",
		"auth": map[string]string{"auth-type": "basic", "auth-secret": "users", "auth-secret-type": "auth-file", "auth-realm": "Staff only"},
	})

	basic := func(user, password string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	}
	preflight := []string{"Origin", "https://app.example.com", "Access-Control-Request-Method", "PUT"}
	cases := []struct {
		name, host, method string
		header             []string
		status             int
	}{
		{"no credentials", "admin.example.com", "GET", nil, http.StatusUnauthorized},
		{"wrong password", "admin.example.com", "GET", []string{"Authorization", basic("alice", "guess")}, http.StatusUnauthorized},
		{"unknown user", "admin.example.com", "GET", []string{"Authorization", basic("bob", "s3cret")}, http.StatusUnauthorized},
		{"another scheme", "admin.example.com", "GET", []string{"Authorization", "Bearer s3cret"}, http.StatusUnauthorized},
		{"right password", "admin.example.com", "GET", []string{"Authorization", basic("alice", "s3cret")}, http.StatusOK},
		{"preflight without credentials", "cors.example.com", "OPTIONS", preflight, http.StatusNoContent},
		{"CORS request without credentials", "cors.example.com", "GET", preflight[:2], http.StatusUnauthorized},
		{"CORS request with the right password", "cors.example.com", "GET", append([]string{"Authorization", basic("alice", "s3cret")}, preflight[:2]...), http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := web.requests.Load()
			got := rj.do(t, tc.method, tc.host, "/dashboard", tc.header...)
			if got.status != tc.status {
				t.Fatalf("status %d, want %d (body %q)", got.status, tc.status, got.body)
			}
			if tc.status != http.StatusOK {
				if n := web.requests.Load() - before; n != 0 {
					t.Errorf("the backend got %d requests, want none", n)
				}
			}
			switch tc.status {
			case http.StatusUnauthorized:
				if challenge := got.header.Get("WWW-Authenticate"); challenge != `Basic realm="Staff only"` {
					t.Errorf("WWW-Authenticate %q, want %q", challenge, `Basic realm="Staff only"`)
				}
			case http.StatusOK:
				if got.backend() != "web" || got.echo.Path != "/dashboard" {
					t.Fatalf("answered by %q for %q, want web for /dashboard", got.backend(), got.echo.Path)
				}
				if v, ok := got.echo.Header["Authorization"]; ok {
					t.Errorf("the backend saw Authorization %q, want none", v)
				}
			}
		})
	}
}

// TestAllowlistSourceRange: allowlist-source-range lets only the listed
// client addresses through; the test's client is 127.0.0.1, so a list
// without it answers 403 without reaching the backend, and a list with
// 127.0.0.0/8 passes, also written over several lines.
func TestAllowlistSourceRange(t *testing.T) {
	web := startBackend(t, "web", nil)
	rj := start(t, `
{{ingress "closed" "closed.example.com" "web" "allowlist-source-range" "10.0.0.0/8, 192.168.0.0/16"}}
{{ingress "open" "open.example.com" "web" "allowlist-source-range" "10.0.0.0/8,127.0.0.0/8"}}
{{ingress "block" "block.example.com" "web" "whitelist-source-range" "10.0.0.0/8,\n127.0.0.0/8,\n192.168.0.0/16\n"}}
{{service "web" .web}}`, map[string]any{"web": web})

	cases := []struct {
		name, host string
		header     []string
		status     int
	}{
		{"127.0.0.1 not listed", "closed.example.com", nil, http.StatusForbidden},
		// ramjetd trusts no proxy by default: a forged X-Forwarded-For
		// does not open the door.
		{"forged X-Forwarded-For", "closed.example.com", []string{"X-Forwarded-For", "10.1.2.3"}, http.StatusForbidden},
		{"127.0.0.0/8 listed", "open.example.com", nil, http.StatusOK},
		{"127.0.0.0/8 listed in a YAML block, one entry per line", "block.example.com", nil, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := web.requests.Load()
			got := rj.get(t, tc.host, "/", tc.header...)
			if got.status != tc.status {
				t.Fatalf("GET %s: status %d, want %d (body %q)", tc.host, got.status, tc.status, got.body)
			}
			reached := web.requests.Load() > before
			if want := tc.status == http.StatusOK; reached != want || want && got.backend() != "web" {
				t.Errorf("GET %s: answered by %q, reached the backend %v, want %v", tc.host, got.backend(), reached, want)
			}
		})
	}
}
