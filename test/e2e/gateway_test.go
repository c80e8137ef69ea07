package e2e

import (
	"net/http"
	"testing"
)

// gatewayObjects are a Gateway of the class ramjet on port 80 (served on
// the shared listener http), an HTTPRoute for gw.example.com with a header
// match, a redirect and a header modifier, and an Ingress for
// ing.example.com next to it.
const gatewayObjects = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ramjet}
spec: {controllerName: ramjet.dev/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: ramjet
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: app}
spec:
  parentRefs: [{name: gw}]
  hostnames: [gw.example.com]
  rules:
    - matches: [{path: {type: PathPrefix, value: /api}}]
      backendRefs: [{name: web, port: 80}]
    - matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x-version, value: v2}]}]
      backendRefs: [{name: web-v2, port: 80}]
    - matches: [{path: {type: Exact, value: /old}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}}}]
    - matches: [{path: {type: PathPrefix, value: /tagged}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Tag, value: gateway}]}}]
      backendRefs: [{name: web, port: 80}]
{{ingress "legacy" "ing.example.com" "web-v2"}}
{{service "web" .web}}
{{service "web-v2" .v2}}`

// TestGatewayHTTPRoute: an HTTPRoute is served with the spec's precedence
// (the header match wins over the plain prefix, though written after it),
// its redirect (302 by default) and its header modifier, and an Ingress
// on another host is served by the same ramjetd at once.
func TestGatewayHTTPRoute(t *testing.T) {
	web, v2 := startBackend(t, "web", nil), startBackend(t, "web-v2", nil)
	rj := start(t, gatewayObjects, map[string]any{"web": web, "v2": v2})
	cases := []struct {
		name, host, target string
		header             []string
		status             int
		backend            string
	}{
		{"plain prefix", "gw.example.com", "/api/items", nil, http.StatusOK, "web"},
		{"header match first", "gw.example.com", "/api/items", []string{"X-Version", "v2"}, http.StatusOK, "web-v2"},
		{"no rule matches", "gw.example.com", "/other", nil, http.StatusNotFound, ""},
		{"the Ingress's host", "ing.example.com", "/api", nil, http.StatusOK, "web-v2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rj.get(t, tc.host, tc.target, tc.header...)
			if got.status != tc.status || got.backend() != tc.backend {
				t.Fatalf("status %d from %q, want %d from %q", got.status, got.backend(), tc.status, tc.backend)
			}
		})
	}
	t.Run("redirect", func(t *testing.T) {
		got := rj.get(t, "gw.example.com", "/old?x=1")
		if got.status != http.StatusFound || got.header.Get("Location") != "http://gw.example.com/new?x=1" {
			t.Fatalf("status %d Location %q, want 302 to http://gw.example.com/new?x=1", got.status, got.header.Get("Location"))
		}
	})
	t.Run("request header set", func(t *testing.T) {
		got := rj.get(t, "gw.example.com", "/tagged", "X-Tag", "client")
		if got.backend() != "web" || got.echo.Header.Get("X-Tag") != "gateway" {
			t.Fatalf("backend %q got X-Tag %q, want web with gateway", got.backend(), got.echo.Header.Values("X-Tag"))
		}
	})
}
