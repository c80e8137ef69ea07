package approot

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

func TestAppRoot(t *testing.T) {
	cases := []struct {
		name, path, scheme, host string
		status                   int
		location                 string
	}{
		{"root redirects", "/", "http", "shop.test", 302, "http://shop.test/app"},
		{"keeps scheme and port", "/", "https", "shop.test:8443", 302, "https://shop.test:8443/app"},
		{"other paths pass", "/x", "http", "shop.test", 200, ""},
		{"root with a query still redirects, without it", "/", "http", "shop.test", 302, "http://shop.test/app"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { w.WriteHeader(200) })
			r := httptest.NewRequest("GET", "http://"+tc.host+tc.path+"?q=1", nil)
			rec := httptest.NewRecorder()
			Handler{Path: "/app", Next: next}.Serve(rec, &exchange.Request{HTTP: r, Path: tc.path, Scheme: tc.scheme})
			if rec.Code != tc.status || rec.Header().Get("Location") != tc.location {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Header().Get("Location"), tc.status, tc.location)
			}
		})
	}
}
