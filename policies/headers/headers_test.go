package headers

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

func TestRequestHeaders(t *testing.T) {
	changes := &config.HeaderChanges{
		Remove: []string{"x-internal", "X-Replaced"},
		Set:    []config.Header{{Name: "x-replaced", Value: "new"}, {Name: "X-Env", Value: "prod"}},
		Add:    []config.Header{{Name: "x-tag", Value: "b"}},
	}
	var seen http.Header
	h := New(changes, nil, exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { seen = x.HTTP.Header.Clone() }))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header = http.Header{"X-Internal": {"secret"}, "X-Replaced": {"old1", "old2"}, "X-Tag": {"a"}, "Accept": {"*/*"}}
	h.Serve(httptest.NewRecorder(), &exchange.Request{HTTP: r})
	want := http.Header{"X-Replaced": {"new"}, "X-Env": {"prod"}, "X-Tag": {"a", "b"}, "Accept": {"*/*"}}
	if len(seen) != len(want) {
		t.Errorf("headers %v, want %v", seen, want)
	}
	for name, values := range want {
		if !slices.Equal(seen[name], values) {
			t.Errorf("%s: %q, want %q", name, seen[name], values)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	changes := &config.HeaderChanges{
		Remove: []string{"server"},
		Set:    []config.Header{{Name: "x-frame-options", Value: "DENY"}},
		Add:    []config.Header{{Name: "vary", Value: "Cookie"}},
	}
	member := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
		w.Header().Set("Server", "backend/1.0")
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		w.Header().Set("Vary", "Accept-Encoding")
		w.Write([]byte("body"))
	})
	for _, name := range []string{"write without WriteHeader", "WriteHeader"} {
		t.Run(name, func(t *testing.T) {
			next := member
			if name == "WriteHeader" {
				next = func(w http.ResponseWriter, x *exchange.Request) {
					w.Header().Set("Server", "backend/1.0")
					w.WriteHeader(201)
				}
			}
			rec := httptest.NewRecorder()
			New(nil, changes, next).Serve(rec, &exchange.Request{HTTP: httptest.NewRequest("GET", "/", nil)})
			h := rec.Result().Header
			if h.Get("Server") != "" || h.Get("X-Frame-Options") != "DENY" || !slices.Contains(h.Values("Vary"), "Cookie") {
				t.Errorf("response headers %v", h)
			}
		})
	}
}
