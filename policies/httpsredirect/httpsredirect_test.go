package httpsredirect

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

func TestServe(t *testing.T) {
	tests := []struct {
		name         string
		scheme       string // exchange.Request.Scheme
		host         string
		target       string  // request target as the client sent it
		path         string  // normalised path, as routing sets it
		handler      Handler // the redirect's shape; Next is set by the test
		wantStatus   int
		wantLocation string
		wantNext     bool
	}{
		{name: "trailing slash kept by default", scheme: "http", host: "example.com", target: "/a/", path: "/a/",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a/"},
		{name: "trailing slash trimmed", scheme: "http", host: "example.com", target: "/a/", path: "/a/", handler: Handler{TrimTrailingSlash: true},
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a"},
		{name: "only one trailing slash trimmed", scheme: "http", host: "example.com", target: "/a//", path: "/a/", handler: Handler{TrimTrailingSlash: true},
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a/"},
		{name: "root trimmed to the bare host", scheme: "http", host: "example.com", target: "/", path: "/", handler: Handler{TrimTrailingSlash: true},
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com"},
		{name: "a slash before the query stays", scheme: "http", host: "example.com", target: "/a/?q=1", path: "/a/", handler: Handler{TrimTrailingSlash: true},
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a/?q=1"},
		{name: "no slash to trim", scheme: "http", host: "example.com", target: "/a", path: "/a", handler: Handler{TrimTrailingSlash: true},
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a"},
		{name: "port written", scheme: "http", host: "example.com:8080", target: "/a/", path: "/a/", handler: New(&config.HTTPSRedirectTarget{Port: 443, TrimTrailingSlash: true}, nil),
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com:443/a"},
		{name: "port written after an IPv6 host", scheme: "http", host: "[2001:db8::1]:8080", target: "/x", path: "/x", handler: New(&config.HTTPSRedirectTarget{Port: 8443}, nil),
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://[2001:db8::1]:8443/x"},
		{name: "plain http", scheme: "http", host: "example.com", target: "/a", path: "/a",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a"},
		{name: "port removed", scheme: "http", host: "example.com:8080", target: "/a", path: "/a",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a"},
		{name: "query kept", scheme: "http", host: "example.com", target: "/a?b=1&c=%20", path: "/a",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a?b=1&c=%20"},
		{name: "escaped path kept as sent", scheme: "http", host: "example.com", target: "/a%2Fb/%7Ec", path: "/a/b/~c",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/a%2Fb/%7Ec"},
		{name: "IPv6 host with port", scheme: "http", host: "[2001:db8::1]:8080", target: "/", path: "/",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://[2001:db8::1]/"},
		{name: "IPv6 host without port", scheme: "http", host: "[2001:db8::1]", target: "/x", path: "/x",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://[2001:db8::1]/x"},
		{name: "https passes", scheme: "https", host: "example.com", target: "/a", path: "/a",
			wantStatus: http.StatusTeapot, wantNext: true},
		// The ACME exemption belongs to routes, not requests: a route that
		// redirects redirects challenges too (ramjetd builds challenge
		// routes without the redirect).
		{name: "ACME path on a redirecting route", scheme: "http", host: "example.com", target: "/.well-known/acme-challenge/tok", path: "/.well-known/acme-challenge/tok",
			wantStatus: http.StatusPermanentRedirect, wantLocation: "https://example.com/.well-known/acme-challenge/tok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			r.Host = tt.host
			called := false
			next := exchange.HandlerFunc(func(w http.ResponseWriter, _ *exchange.Request) {
				called = true
				w.WriteHeader(http.StatusTeapot)
			})
			w := httptest.NewRecorder()
			h := tt.handler
			h.Next = next
			h.Serve(w, &exchange.Request{HTTP: r, Scheme: tt.scheme, Path: tt.path})
			if called != tt.wantNext {
				t.Errorf("next called = %v, want %v", called, tt.wantNext)
			}
			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if got := w.Header().Get("Location"); got != tt.wantLocation {
				t.Errorf("Location = %q, want %q", got, tt.wantLocation)
			}
		})
	}
}

func BenchmarkRedirectTarget(b *testing.B) {
	h := New(&config.HTTPSRedirectTarget{TrimTrailingSlash: true, Port: 443}, nil)
	x := &exchange.Request{HTTP: httptest.NewRequest(http.MethodGet, "/a/b/", nil), Scheme: "http"}
	x.HTTP.Host = "example.com:8080"
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.Serve(w, x)
	}
}
