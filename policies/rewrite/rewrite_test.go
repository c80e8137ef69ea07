package rewrite

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

func TestRewrite(t *testing.T) {
	cases := []struct {
		name     string
		cfg      config.Rewrite
		prefix   string
		captures []string
		wantPath string
		wantHost string
	}{
		{"captures", config.Rewrite{Path: "/$2"}, "", []string{"/something/new", "/", "new"}, "/new", ""},
		{"capture empty", config.Rewrite{Path: "/$2"}, "", []string{"/something", "", ""}, "/", ""},
		{"several captures and literals", config.Rewrite{Path: "/v2/$1/items/$2"}, "", []string{"/api/a/b", "a", "b"}, "/v2/a/items/b", ""},
		{"a group the regex lacks is empty", config.Rewrite{Path: "/x$3y"}, "", []string{"/a", "a"}, "/xy", ""},
		{"no captures: every match to one path", config.Rewrite{Path: "/"}, "", []string{"/anything"}, "/", ""},
		{"no captures on a prefix route", config.Rewrite{Path: "/fixed"}, "", nil, "/fixed", ""},
		{"a dollar that is no reference", config.Rewrite{Path: "/price$/$x"}, "", []string{"/p"}, "/price$/$x", ""},
		{"host only", config.Rewrite{Host: "backend.internal"}, "", nil, "", "backend.internal"},
		{"path and host", config.Rewrite{Path: "/$1", Host: "b.test:8080"}, "", []string{"/x", "x"}, "/x", "b.test:8080"},
		{"prefix replaced", config.Rewrite{PathPrefix: new("/new")}, "/orig", nil, "/new/x", ""},
		{"prefix stripped", config.Rewrite{PathPrefix: new("")}, "/orig/", nil, "/x", ""},
		{"prefix and host", config.Rewrite{PathPrefix: new("/"), Host: "b.test"}, "/orig", nil, "/x", "b.test"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *exchange.Request
			h := New(&tc.cfg, tc.prefix, exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { got = x }))
			x := &exchange.Request{HTTP: httptest.NewRequest("GET", "/orig/x?q=1", nil), Path: "/orig/x", Captures: tc.captures}
			h.Serve(httptest.NewRecorder(), x)
			if got == nil {
				t.Fatal("next was not called")
			}
			if got.ForwardPath != tc.wantPath || got.ForwardHost != tc.wantHost {
				t.Errorf("forward path %q host %q, want %q %q", got.ForwardPath, got.ForwardHost, tc.wantPath, tc.wantHost)
			}
		})
	}
}

func BenchmarkRewriteCaptures(b *testing.B) {
	h := New(&config.Rewrite{Path: "/v2/$1/$2"}, "", exchange.HandlerFunc(func(http.ResponseWriter, *exchange.Request) {}))
	x := &exchange.Request{HTTP: httptest.NewRequest("GET", "/", nil), Captures: []string{"/api/a/b", "a", "b"}}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.Serve(w, x)
	}
}

func TestForwardedPrefix(t *testing.T) {
	cases := []struct {
		name     string
		cfg      config.Rewrite
		client   string // X-Forwarded-Prefix the client sent, "" for none
		captures []string
		want     []string // nil: no header
	}{
		{"fixed value", config.Rewrite{Path: "/$2", ForwardedPrefix: "/api"}, "", []string{"/api/x", "/", "x"}, []string{"/api"}},
		{"replaces the client's", config.Rewrite{Path: "/", ForwardedPrefix: "/api"}, "/forged", []string{"/api"}, []string{"/api"}},
		{"submatches", config.Rewrite{Path: "/$2", ForwardedPrefix: "/$1"}, "", []string{"/shop/x", "shop", "x"}, []string{"/shop"}},
		{"empty expansion sends none", config.Rewrite{Path: "/$2", ForwardedPrefix: "$3"}, "/forged", []string{"/a", "a", ""}, nil},
		{"none asked: the client's passes", config.Rewrite{Path: "/"}, "/client", nil, []string{"/client"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			h := New(&tc.cfg, "", exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { got = x.HTTP.Header["X-Forwarded-Prefix"] }))
			r := httptest.NewRequest("GET", "/orig/x", nil)
			if tc.client != "" {
				r.Header.Set("X-Forwarded-Prefix", tc.client)
			}
			h.Serve(httptest.NewRecorder(), &exchange.Request{HTTP: r, Path: "/orig/x", Captures: tc.captures})
			if !slices.Equal(got, tc.want) {
				t.Errorf("X-Forwarded-Prefix %q, want %q", got, tc.want)
			}
		})
	}
}

func BenchmarkForwardedPrefixCaptures(b *testing.B) {
	h := New(&config.Rewrite{Path: "/$2", ForwardedPrefix: "/$1"}, "", exchange.HandlerFunc(func(http.ResponseWriter, *exchange.Request) {}))
	x := &exchange.Request{HTTP: httptest.NewRequest("GET", "/", nil), Captures: []string{"/api/a", "api", "a"}}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.Serve(w, x)
	}
}
