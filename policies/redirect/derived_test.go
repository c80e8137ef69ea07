package redirect

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// TestDerived follows the Gateway API's RequestRedirect rules and its
// conformance tests HTTPRouteRedirectPortAndScheme (listeners on 80, 8080
// and 443), HTTPRouteRedirectPath, HTTPRouteRedirectPort,
// HTTPRouteRedirectScheme and HTTPRouteRedirectHostAndStatus.
func TestDerived(t *testing.T) {
	tests := []struct {
		name     string
		cfg      config.Redirect
		prefix   string
		listener string // port
		tls      bool
		scheme   string // x.Scheme; "" is the listener's
		host     string
		target   string
		want     string
		wantCode int
	}{
		{name: "8080, scheme and port nil: the listener's port", cfg: config.Redirect{Hostname: "example.org"}, listener: "8080", target: "/scheme-nil-and-port-nil", want: "http://example.org:8080/scheme-nil-and-port-nil"},
		{name: "8080, port 80 is left out", cfg: config.Redirect{Hostname: "example.org", Port: 80}, listener: "8080", target: "/p", want: "http://example.org/p"},
		{name: "80, scheme and port nil", cfg: config.Redirect{Hostname: "example.org"}, listener: "80", target: "/p", want: "http://example.org/p"},
		{name: "80, port 8080", cfg: config.Redirect{Hostname: "example.org", Port: 8080}, listener: "80", target: "/p", want: "http://example.org:8080/p"},
		{name: "80, scheme https without port: none", cfg: config.Redirect{Scheme: "https", Hostname: "example.org"}, listener: "80", target: "/p", want: "https://example.org/p"},
		{name: "8080, scheme https without port: none", cfg: config.Redirect{Scheme: "https"}, listener: "8080", host: "example.org:8080", target: "/p", want: "https://example.org/p"},
		{name: "scheme https and port 443", cfg: config.Redirect{Scheme: "https", Port: 443}, listener: "80", target: "/p", want: "https://app.test/p"},
		{name: "scheme https and port 8443", cfg: config.Redirect{Scheme: "https", Port: 8443}, listener: "80", target: "/p", want: "https://app.test:8443/p"},
		{name: "443, scheme and port nil", cfg: config.Redirect{Hostname: "example.org"}, listener: "443", tls: true, target: "/p", want: "https://example.org/p"},
		{name: "443, port 8443", cfg: config.Redirect{Port: 8443}, listener: "443", tls: true, target: "/p", want: "https://app.test:8443/p"},
		{name: "443, scheme http without port", cfg: config.Redirect{Scheme: "http"}, listener: "443", tls: true, target: "/p", want: "http://app.test/p"},
		{name: "8443, scheme http and port 80", cfg: config.Redirect{Scheme: "http", Port: 80}, listener: "8443", tls: true, target: "/p", want: "http://app.test/p"},
		{name: "forwarded proto https on 8080: no listener port", cfg: config.Redirect{Hostname: "example.org"}, listener: "8080", scheme: "https", target: "/p", want: "https://example.org/p"},
		{name: "host and status", cfg: config.Redirect{Hostname: "example.org", Code: 301}, listener: "80", target: "/hostname-redirect", want: "http://example.org/hostname-redirect", wantCode: 301},
		{name: "request host's port is dropped", cfg: config.Redirect{Port: 8083}, listener: "80", host: "app.test:9999", target: "/p", want: "http://app.test:8083/p"},
		{name: "IPv6 host keeps its brackets", cfg: config.Redirect{Scheme: "https"}, listener: "80", host: "[::1]:80", target: "/p", want: "https://[::1]/p"},
		{name: "prefix replaced", cfg: config.Redirect{PathPrefix: new("/replacement-prefix")}, prefix: "/original-prefix", listener: "80", target: "/original-prefix/lemon", want: "http://app.test/replacement-prefix/lemon"},
		{name: "prefix replaced, prefix only", cfg: config.Redirect{PathPrefix: new("/replacement-prefix")}, prefix: "/path-and-host", listener: "80", target: "/path-and-host", want: "http://app.test/replacement-prefix"},
		{name: "prefix stripped", cfg: config.Redirect{PathPrefix: new("")}, prefix: "/foo", listener: "80", target: "/foo", want: "http://app.test/"},
		{name: "full path", cfg: config.Redirect{Path: "/full-path-replacement"}, prefix: "/full", listener: "80", target: "/full/path/original", want: "http://app.test/full-path-replacement"},
		{name: "query kept", cfg: config.Redirect{Path: "/new"}, listener: "80", target: "/old?a=1&b=2", want: "http://app.test/new?a=1&b=2"},
		{name: "path as sent", cfg: config.Redirect{Scheme: "https"}, listener: "80", target: "/a%2Fb/c%20d", want: "https://app.test/a%2Fb/c%20d"},
		{name: "replaced path is encoded", cfg: config.Redirect{PathPrefix: new("/x")}, prefix: "/a", listener: "80", target: "/a/c%20d", want: "http://app.test/x/c%20d"},
		{name: "trim: one trailing slash removed", cfg: config.Redirect{Hostname: "example.org", TrimTrailingSlash: true}, listener: "80", target: "/a/b//", want: "http://example.org/a/b/"},
		{name: "trim: the root stays", cfg: config.Redirect{Hostname: "example.org", TrimTrailingSlash: true}, listener: "80", target: "/", want: "http://example.org/"},
		{name: "trim: a query keeps the path's slash", cfg: config.Redirect{Hostname: "example.org", TrimTrailingSlash: true}, listener: "8080", target: "/a/?q=1", want: "http://example.org:8080/a/?q=1"},
		{name: "trim: a query ending in a slash loses it", cfg: config.Redirect{Hostname: "example.org", TrimTrailingSlash: true}, listener: "80", target: "/a?next=/b/", want: "http://example.org/a?next=/b"},
		{name: "trim: https listener", cfg: config.Redirect{Hostname: "example.org", Code: 308, TrimTrailingSlash: true}, listener: "443", tls: true, target: "/shop/", want: "https://example.org/shop", wantCode: 308},
		{name: "no trim: slash kept", cfg: config.Redirect{Hostname: "example.org"}, listener: "80", target: "/a/", want: "http://example.org/a/"},
		{name: "code 308", cfg: config.Redirect{Scheme: "https", Code: 308}, listener: "80", target: "/", want: "https://app.test/", wantCode: 308},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			r.Host = "app.test"
			if tt.host != "" {
				r.Host = tt.host
			}
			x := &exchange.Request{HTTP: r, Path: r.URL.Path, Port: tt.listener, TLS: tt.tls, Scheme: tt.scheme}
			if x.Scheme == "" {
				x.Scheme = listenerScheme(x)
			}
			w := httptest.NewRecorder()
			NewDerived(&tt.cfg, tt.prefix).Serve(w, x)
			wantCode := tt.wantCode
			if wantCode == 0 {
				wantCode = DefaultCode
			}
			if got := w.Header().Get("Location"); got != tt.want || w.Code != wantCode {
				t.Errorf("got %d %q, want %d %q", w.Code, got, wantCode, tt.want)
			}
		})
	}
}
