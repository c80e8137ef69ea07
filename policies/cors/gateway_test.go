package cors

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// TestGatewayAPI checks the Gateway API semantics (config.CORS.GatewayAPI)
// against the HTTPCORSFilter's: wildcards of any depth, "*" echoed with
// credentials, and preflights always answered by the proxy.
func TestGatewayAPI(t *testing.T) {
	listed := config.CORS{GatewayAPI: true, AllowOrigins: []string{"https://www.foo.com", "https://*.bar.com"},
		AllowMethods: []string{"GET", "OPTIONS"}, AllowCredentials: true}
	anyWithCredentials := config.CORS{GatewayAPI: true, AllowOrigins: []string{"*"}, AllowMethods: []string{"*"},
		AllowHeaders: []string{"*"}, AllowCredentials: true}
	anyWithout := anyWithCredentials
	anyWithout.AllowCredentials = false
	tests := []struct {
		name    string
		cfg     config.CORS
		method  string
		header  map[string]string
		status  int
		want    map[string]string // "" for a header that must be absent
		reached bool              // the member answered
	}{
		{"wildcard of two labels", listed, http.MethodOptions,
			map[string]string{"Origin": "https://xpto.www.bar.com", "Access-Control-Request-Method": "GET"},
			http.StatusNoContent, map[string]string{hdrAllowOrigin: "https://xpto.www.bar.com", hdrAllowCredentials: "true"}, false},
		{"wildcard does not match the bare domain", listed, http.MethodGet,
			map[string]string{"Origin": "https://bar.com"}, http.StatusOK, map[string]string{hdrAllowOrigin: ""}, true},
		{"preflight from an origin not allowed is answered here", listed, http.MethodOptions,
			map[string]string{"Origin": "https://foobar.com", "Access-Control-Request-Method": "GET"},
			http.StatusNoContent, map[string]string{hdrAllowOrigin: "", hdrAllowMethods: "", hdrVary: "Origin"}, false},
		{"OPTIONS that is no preflight goes to the member", listed, http.MethodOptions,
			map[string]string{"Origin": "https://foobar.com"}, http.StatusOK, map[string]string{hdrAllowOrigin: ""}, true},
		{"* with credentials echoes the origin, method and headers", anyWithCredentials, http.MethodOptions,
			map[string]string{"Origin": "https://other.foo.com", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-a, x-b"},
			http.StatusNoContent, map[string]string{hdrAllowOrigin: "https://other.foo.com", hdrAllowCredentials: "true",
				hdrAllowMethods: "PUT", hdrAllowHeaders: "x-a, x-b", hdrVary: "Origin"}, false},
		{"* with credentials on an answer", anyWithCredentials, http.MethodGet,
			map[string]string{"Origin": "https://other.foo.com"}, http.StatusOK,
			map[string]string{hdrAllowOrigin: "https://other.foo.com", hdrAllowCredentials: "true"}, true},
		{"* with credentials never echoes null", anyWithCredentials, http.MethodGet,
			map[string]string{"Origin": "null"}, http.StatusOK, map[string]string{hdrAllowOrigin: "", hdrAllowCredentials: ""}, true},
		{"requested headers that are no tokens are not echoed", anyWithCredentials, http.MethodOptions,
			map[string]string{"Origin": "https://other.foo.com", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-a, <b>"},
			http.StatusNoContent, map[string]string{hdrAllowOrigin: "https://other.foo.com", hdrAllowHeaders: ""}, false},
		{"* without credentials stays *", anyWithout, http.MethodOptions,
			map[string]string{"Origin": "https://other.foo.com", "Access-Control-Request-Method": "PUT"},
			http.StatusNoContent, map[string]string{hdrAllowOrigin: "*", hdrAllowCredentials: "", hdrAllowMethods: "*"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &member{}
			h := newHandler(t, tc.cfg, m)
			r := httptest.NewRequest(tc.method, "/", nil)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.Serve(w, &exchange.Request{HTTP: r})
			resp := w.Result()
			if resp.StatusCode != tc.status || m.called != tc.reached {
				t.Errorf("status %d, member reached %t; want %d, %t", resp.StatusCode, m.called, tc.status, tc.reached)
			}
			for name, want := range tc.want {
				if got := resp.Header.Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

// TestIngressSemanticsUnchanged: without GatewayAPI a wildcard is one label
// and "*" with credentials is refused, as ingress-nginx's annotations mean.
func TestIngressSemanticsUnchanged(t *testing.T) {
	h := newHandler(t, config.CORS{AllowOrigins: []string{"https://*.bar.com"}}, &member{})
	if resp := serve(h, http.MethodGet, []string{"https://a.b.bar.com"}); resp.Header.Get(hdrAllowOrigin) != "" {
		t.Errorf("https://a.b.bar.com matched the one-label wildcard https://*.bar.com")
	}
	if _, err := New(&config.CORS{AllowOrigins: []string{"*"}, AllowCredentials: true}, &member{}); err == nil {
		t.Error(`credentials with "*" were accepted without GatewayAPI`)
	}
}
