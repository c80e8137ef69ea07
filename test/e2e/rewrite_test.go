package e2e

import (
	"net/http"
	"testing"
)

// TestRewriteTargetCaptures: with rewrite-target /$2 on the path
// /api(/|$)(.*) the backend gets the second capture as its path, and the
// query string as sent; the path is a case-insensitive regex anchored at
// the start, as ingress-nginx's location ~* "^/api(/|$)(.*)"; so is the
// Exact path beside it.
func TestRewriteTargetCaptures(t *testing.T) {
	web := startBackend(t, "web", nil)
	rj := start(t, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: app
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /$2
spec:
  ingressClassName: ramjet
  rules:
    - host: rewrite.example.com
      http:
        paths:
          - {path: /api(/|$)(.*), pathType: ImplementationSpecific, backend: {service: {name: web, port: {name: http}}}}
          - {path: "/api/user/register(/|$)(.*)", pathType: Exact, backend: {service: {name: web, port: {name: http}}}}
{{service "web" .web}}`, map[string]any{"web": web})

	cases := []struct {
		name, target string
		status       int
		path, query  string
	}{
		{"capture and query", "/api/x?q=1", 200, "/x", "q=1"},
		{"nothing after the prefix", "/api", 200, "/", ""},
		{"a bare slash", "/api/", 200, "/", ""},
		{"deeper path", "/api/a/b/c", 200, "/a/b/c", ""},
		{"case-insensitive", "/API/x", 200, "/x", ""},
		{"no match", "/apix", http.StatusNotFound, "", ""},
		// On a regex host an Exact path is a regex too (ingress-nginx's
		// ~* "^<path>"), tried first as the longest.
		{"an Exact capture path", "/api/user/register/confirm", 200, "/confirm", ""},
		{"an Exact capture path itself", "/api/user/register", 200, "/", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rj.get(t, "rewrite.example.com", tc.target)
			if got.status != tc.status {
				t.Fatalf("GET %s: status %d, want %d (body %q)", tc.target, got.status, tc.status, got.body)
			}
			if tc.status != 200 {
				if got.echo != nil {
					t.Errorf("GET %s reached backend %s", tc.target, got.backend())
				}
				return
			}
			if got.backend() != "web" || got.echo.Path != tc.path || got.echo.Query != tc.query {
				t.Errorf("GET %s reached %q as %q ? %q, want web as %q ? %q", tc.target, got.backend(), got.echo.Path, got.echo.Query, tc.path, tc.query)
			}
		})
	}
}

// TestAppRoot: app-root answers a request for / with a 302 to the
// application root on the same scheme and host, without the query string;
// every other path, the root itself included, is proxied.
func TestAppRoot(t *testing.T) {
	web := startBackend(t, "web", nil)
	rj := start(t, `
{{ingress "shop" "shop.example.com" "web" "app-root" "/app"}}
{{service "web" .web}}`, map[string]any{"web": web})

	cases := []struct {
		name, target string
		status       int
		location     string
		path         string
	}{
		{"root redirects", "/", http.StatusFound, "http://shop.example.com/app", ""},
		{"root with a query redirects without it", "/?lang=fr", http.StatusFound, "http://shop.example.com/app", ""},
		{"the app root is proxied", "/app", 200, "", "/app"},
		{"other paths are proxied", "/cart/42", 200, "", "/cart/42"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rj.get(t, "shop.example.com", tc.target)
			if got.status != tc.status || got.header.Get("Location") != tc.location {
				t.Fatalf("GET %s: %d Location %q, want %d Location %q", tc.target, got.status, got.header.Get("Location"), tc.status, tc.location)
			}
			switch {
			case tc.path == "" && got.echo != nil:
				t.Errorf("GET %s reached backend %s", tc.target, got.backend())
			case tc.path != "" && (got.backend() != "web" || got.echo.Path != tc.path):
				t.Errorf("GET %s reached %q as %q, want web as %q", tc.target, got.backend(), got.echo.Path, tc.path)
			}
		})
	}
}

// TestPermanentRedirect: every path of an object with permanent-redirect
// answers its code (301 unless permanent-redirect-code says otherwise)
// with the URL as Location, literally: the request's path and query are
// not appended, and the backend is never reached.
func TestPermanentRedirect(t *testing.T) {
	web := startBackend(t, "web", nil)
	rj := start(t, `
{{ingress "moved" "old.example.com" "web" "permanent-redirect" "https://www.example.org/new-home"}}
{{ingress "moved-308" "old308.example.com" "web" "permanent-redirect" "https://www.example.org/other?from=old" "permanent-redirect-code" "308"}}
{{service "web" .web}}`, map[string]any{"web": web})

	cases := []struct {
		name, host, method, target string
		status                     int
		location                   string
	}{
		{"default code", "old.example.com", "GET", "/", http.StatusMovedPermanently, "https://www.example.org/new-home"},
		{"path and query not appended", "old.example.com", "GET", "/a/b?c=d", http.StatusMovedPermanently, "https://www.example.org/new-home"},
		{"POST too", "old.example.com", "POST", "/form", http.StatusMovedPermanently, "https://www.example.org/new-home"},
		{"code 308", "old308.example.com", "GET", "/", http.StatusPermanentRedirect, "https://www.example.org/other?from=old"},
		{"code 308, path not appended", "old308.example.com", "GET", "/x?y=1", http.StatusPermanentRedirect, "https://www.example.org/other?from=old"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rj.do(t, tc.method, tc.host, tc.target)
			if got.status != tc.status || got.header.Get("Location") != tc.location {
				t.Errorf("%s %s%s: %d Location %q, want %d Location %q", tc.method, tc.host, tc.target, got.status, got.header.Get("Location"), tc.status, tc.location)
			}
		})
	}
	if n := web.requests.Load(); n != 0 {
		t.Errorf("the backend got %d requests, want none", n)
	}
}
