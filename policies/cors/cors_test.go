package cors

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// checked are the response headers every Serve case compares.
var checked = []string{
	hdrAllowOrigin, hdrAllowCredentials, hdrAllowMethods, hdrAllowHeaders,
	hdrExposeHeaders, hdrMaxAge, hdrVary, "Content-Type", "Content-Length", "X-Member",
}

// member is a next handler that answers 200 with headers of its own,
// CORS ones included, and records that it was called.
type member struct {
	called bool
	header http.Header
}

func (m *member) Serve(w http.ResponseWriter, x *exchange.Request) {
	m.called = true
	for k, vv := range m.header {
		w.Header()[k] = slices.Clone(vv)
	}
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "member")
}

func newHandler(t testing.TB, cfg config.CORS, next exchange.Handler) *Handler {
	t.Helper()
	h, err := New(&cfg, next)
	if err != nil {
		t.Fatalf("New(%+v) error = %v, want none", cfg, err)
	}
	return h
}

// serve runs one request and returns the response as the client gets it
// (headers as they were when the status was written).
func serve(h *Handler, method string, origins []string) *http.Response {
	r := httptest.NewRequest(method, "/", nil)
	if origins != nil {
		r.Header[hdrOrigin] = origins
	}
	w := httptest.NewRecorder()
	h.Serve(w, &exchange.Request{HTTP: r})
	return w.Result()
}

func checkHeaders(t *testing.T, got http.Header, want map[string][]string) {
	t.Helper()
	for _, name := range checked {
		if g, w := got[name], want[name]; !slices.Equal(g, w) {
			t.Errorf("%s = %q, want %q", name, g, w)
		}
	}
}

func TestDefaults(t *testing.T) {
	if DefaultMethods != "GET, PUT, POST, DELETE, PATCH, OPTIONS" {
		t.Errorf("DefaultMethods = %q, want ingress-nginx's", DefaultMethods)
	}
	if DefaultHeaders != "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization" {
		t.Errorf("DefaultHeaders = %q, want ingress-nginx's", DefaultHeaders)
	}
	if DefaultMaxAge != 1728000 {
		t.Errorf("DefaultMaxAge = %d, want 1728000", DefaultMaxAge)
	}
	m := &member{}
	resp := serve(newHandler(t, config.CORS{}, m), "GET", nil)
	checkHeaders(t, resp.Header, map[string][]string{
		hdrAllowOrigin:   {"*"},
		hdrAllowMethods:  {"GET, PUT, POST, DELETE, PATCH, OPTIONS"},
		hdrAllowHeaders:  {"DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"},
		hdrMaxAge:        {"1728000"},
		"Content-Length": nil,
	})
	if !m.called {
		t.Error("next called = false, want true")
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.CORS
		want map[string][]string
	}{
		{name: "configured lists joined",
			cfg: config.CORS{AllowMethods: []string{"GET", "POST"}, AllowHeaders: []string{"X-A", "Content-Type"},
				ExposeHeaders: []string{"X-Total", "X-Page"}, MaxAge: config.Duration(90 * time.Second)},
			want: map[string][]string{hdrAllowOrigin: {"*"}, hdrAllowMethods: {"GET, POST"}, hdrAllowHeaders: {"X-A, Content-Type"},
				hdrExposeHeaders: {"X-Total, X-Page"}, hdrMaxAge: {"90"}}},
		{name: "expose star, max age rounded up",
			cfg: config.CORS{ExposeHeaders: []string{"*"}, MaxAge: config.Duration(1500 * time.Millisecond)},
			want: map[string][]string{hdrAllowOrigin: {"*"}, hdrAllowMethods: {DefaultMethods}, hdrAllowHeaders: {DefaultHeaders},
				hdrExposeHeaders: {"*"}, hdrMaxAge: {"2"}}},
		{name: "sub-second max age is not 0",
			cfg:  config.CORS{MaxAge: config.Duration(500 * time.Millisecond)},
			want: map[string][]string{hdrAllowOrigin: {"*"}, hdrAllowMethods: {DefaultMethods}, hdrAllowHeaders: {DefaultHeaders}, hdrMaxAge: {"1"}}},
		{name: "star in a list stands for the list",
			cfg: config.CORS{AllowOrigins: []string{"https://a.example.com", "*"}},
			want: map[string][]string{hdrAllowOrigin: {"*"}, hdrAllowMethods: {DefaultMethods}, hdrAllowHeaders: {DefaultHeaders},
				hdrMaxAge: {"1728000"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := serve(newHandler(t, tt.cfg, &member{}), "GET", []string{"https://other.example"})
			checkHeaders(t, resp.Header, tt.want)
		})
	}
}

func TestOriginMatch(t *testing.T) {
	cfg := config.CORS{AllowOrigins: []string{
		"https://app.example.com", "https://*.example.org", "http://localhost:8080", "https://Mixed.Example.net", "null",
	}}
	h := newHandler(t, cfg, &member{})
	tests := []struct {
		name    string
		origins []string
		want    bool
	}{
		{"exact", []string{"https://app.example.com"}, true},
		{"exact with port", []string{"http://localhost:8080"}, true},
		{"case of the request", []string{"HTTPS://APP.Example.COM"}, true},
		{"case of the configuration", []string{"https://mixed.example.net"}, true},
		{"wildcard one label", []string{"https://a.example.org"}, true},
		{"wildcard label with digits and hyphen", []string{"https://a-1.example.org"}, true},
		{"wildcard label of 63", []string{"https://" + strings.Repeat("a", 63) + ".example.org"}, true},
		{"wildcard label of 64", []string{"https://" + strings.Repeat("a", 64) + ".example.org"}, false},
		{"wildcard two labels", []string{"https://a.b.example.org"}, false},
		{"wildcard bare domain", []string{"https://example.org"}, false},
		{"wildcard empty label", []string{"https://.example.org"}, false},
		{"wildcard label not a host", []string{"https://a_b.example.org"}, false},
		{"wildcard with a port", []string{"https://a.example.org:8443"}, false},
		{"wildcard wrong scheme", []string{"http://a.example.org"}, false},
		{"wrong scheme", []string{"http://app.example.com"}, false},
		{"wrong port", []string{"http://localhost:8081"}, false},
		{"port missing", []string{"http://localhost"}, false},
		{"explicit default port", []string{"https://app.example.com:443"}, false},
		{"prefix only (nginx end anchoring would pass)", []string{"xhttps://app.example.com"}, false},
		{"suffix added", []string{"https://app.example.com.evil.com"}, false},
		{"path added", []string{"https://app.example.com/"}, false},
		{"null", []string{"null"}, true},
		{"null upper case", []string{"NULL"}, false},
		{"missing", nil, false},
		{"empty", []string{""}, false},
		{"star", []string{"*"}, false},
		{"garbage", []string{"\x00\xff garbage"}, false},
		{"non-ASCII folding to the label", []string{"https://\u212a.example.org"}, false},
		{"non-ASCII", []string{"https://äpp.example.com"}, false},
		{"CRLF", []string{"https://app.example.com\r\nX-Evil: 1"}, false},
		{"very long", []string{"https://" + strings.Repeat("a.", 1<<15) + "example.org"}, false},
		{"several, first listed", []string{"https://app.example.com", "https://evil.com"}, true},
		{"several, first not listed", []string{"https://evil.com", "https://app.example.com"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := serve(h, "GET", tt.origins)
			got := resp.Header[hdrAllowOrigin]
			var want []string
			if tt.want {
				want = tt.origins[:1]
			}
			if !slices.Equal(got, want) {
				t.Errorf("Origin %q: Access-Control-Allow-Origin = %q, want %q", tt.origins, got, want)
			}
		})
	}
}

func TestServe(t *testing.T) {
	list := config.CORS{AllowOrigins: []string{"https://app.example.com"}}
	full := config.CORS{
		AllowOrigins: []string{"https://app.example.com"}, AllowCredentials: true,
		AllowMethods: []string{"GET", "PUT"}, ExposeHeaders: []string{"X-Total"},
		MaxAge: config.Duration(time.Hour),
	}
	memberHeader := http.Header{
		"X-Member":     {"1"},
		hdrVary:        {"Accept-Encoding"},
		hdrAllowOrigin: {"https://other"},
	}
	const app = "https://app.example.com"
	star := map[string][]string{hdrAllowOrigin: {"*"}, hdrAllowMethods: {DefaultMethods},
		hdrAllowHeaders: {DefaultHeaders}, hdrMaxAge: {"1728000"}}
	starPreflight := with(star, map[string][]string{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Length": {"0"}})
	starActual := with(star, map[string][]string{hdrVary: {"Accept-Encoding"}, "X-Member": {"1"}})
	matched := map[string][]string{hdrAllowOrigin: {app}, hdrAllowMethods: {DefaultMethods},
		hdrAllowHeaders: {DefaultHeaders}, hdrMaxAge: {"1728000"}}
	untouched := map[string][]string{hdrAllowOrigin: {"https://other"}, hdrVary: {"Accept-Encoding", "Origin"}, "X-Member": {"1"}}
	tests := []struct {
		name     string
		cfg      config.CORS
		method   string
		origins  []string
		wantNext bool
		want     map[string][]string
	}{
		{name: "star preflight without Origin", cfg: config.CORS{}, method: "OPTIONS",
			want: starPreflight},
		{name: "star preflight with Origin", cfg: config.CORS{}, method: "OPTIONS", origins: []string{"https://any.example"},
			want: starPreflight},
		{name: "star actual without Origin", cfg: config.CORS{}, method: "GET", wantNext: true,
			want: starActual},
		{name: "star actual with Origin", cfg: config.CORS{}, method: "POST", origins: []string{"https://any.example"}, wantNext: true,
			want: starActual},
		{name: "list preflight matching", cfg: list, method: "OPTIONS", origins: []string{app},
			want: with(matched, map[string][]string{hdrVary: {"Origin"},
				"Content-Type": {"text/plain; charset=utf-8"}, "Content-Length": {"0"}})},
		{name: "list preflight not matching goes to the member", cfg: list, method: "OPTIONS", origins: []string{"https://evil.example"},
			wantNext: true, want: untouched},
		{name: "list preflight without Origin goes to the member", cfg: list, method: "OPTIONS",
			wantNext: true, want: untouched},
		{name: "list actual matching replaces the member's", cfg: list, method: "GET", origins: []string{app}, wantNext: true,
			want: with(matched, map[string][]string{hdrVary: {"Accept-Encoding", "Origin"}, "X-Member": {"1"}})},
		{name: "list actual not matching", cfg: list, method: "GET", origins: []string{"https://evil.example"},
			wantNext: true, want: untouched},
		{name: "list actual without Origin", cfg: list, method: "GET",
			wantNext: true, want: untouched},
		{name: "credentials and expose on a preflight", cfg: full, method: "OPTIONS", origins: []string{app},
			want: map[string][]string{hdrAllowOrigin: {app}, hdrAllowCredentials: {"true"}, hdrAllowMethods: {"GET, PUT"},
				hdrAllowHeaders: {DefaultHeaders}, hdrExposeHeaders: {"X-Total"}, hdrMaxAge: {"3600"}, hdrVary: {"Origin"},
				"Content-Type": {"text/plain; charset=utf-8"}, "Content-Length": {"0"}}},
		{name: "credentials and expose on an actual request", cfg: full, method: "PUT", origins: []string{app}, wantNext: true,
			want: map[string][]string{hdrAllowOrigin: {app}, hdrAllowCredentials: {"true"}, hdrAllowMethods: {"GET, PUT"},
				hdrAllowHeaders: {DefaultHeaders}, hdrExposeHeaders: {"X-Total"}, hdrMaxAge: {"3600"},
				hdrVary: {"Accept-Encoding", "Origin"}, "X-Member": {"1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &member{header: memberHeader}
			resp := serve(newHandler(t, tt.cfg, m), tt.method, tt.origins)
			if m.called != tt.wantNext {
				t.Fatalf("next called = %v, want %v", m.called, tt.wantNext)
			}
			wantStatus, wantBody := http.StatusNoContent, ""
			if tt.wantNext {
				wantStatus, wantBody = http.StatusOK, "member"
			}
			if resp.StatusCode != wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, wantStatus)
			}
			if b, _ := io.ReadAll(resp.Body); string(b) != wantBody {
				t.Errorf("body = %q, want %q", b, wantBody)
			}
			checkHeaders(t, resp.Header, tt.want)
		})
	}
}

// with returns a copy of a with the entries of b added.
func with(a, b map[string][]string) map[string][]string {
	c := make(map[string][]string, len(a)+len(b))
	for k, v := range a {
		c[k] = v
	}
	for k, v := range b {
		c[k] = v
	}
	return c
}

func TestCredentialsOffKeepsTheMembers(t *testing.T) {
	m := &member{header: http.Header{hdrAllowCredentials: {"true"}, hdrExposeHeaders: {"X-Own"}}}
	h := newHandler(t, config.CORS{AllowOrigins: []string{"https://app.example.com"}}, m)
	resp := serve(h, "GET", []string{"https://app.example.com"})
	// As nginx: only the headers the policy sets replace the member's.
	if got, want := resp.Header[hdrAllowCredentials], []string{"true"}; !slices.Equal(got, want) {
		t.Errorf("%s = %q, want the member's %q", hdrAllowCredentials, got, want)
	}
	if got, want := resp.Header[hdrExposeHeaders], []string{"X-Own"}; !slices.Equal(got, want) {
		t.Errorf("%s = %q, want the member's %q", hdrExposeHeaders, got, want)
	}
}

func TestVary(t *testing.T) {
	tests := []struct {
		name   string
		member []string
		want   []string
	}{
		{"none", nil, []string{"Origin"}},
		{"one", []string{"Accept-Encoding"}, []string{"Accept-Encoding", "Origin"}},
		{"two lines", []string{"Accept-Encoding", "Cookie"}, []string{"Accept-Encoding", "Cookie", "Origin"}},
		{"origin already there", []string{"accept-encoding, origin"}, []string{"accept-encoding, origin"}},
		{"origin in a second line", []string{"Cookie", " Origin "}, []string{"Cookie", " Origin "}},
		{"star", []string{"*"}, []string{"*"}},
		{"a longer name is not origin", []string{"Origin-Agent"}, []string{"Origin-Agent", "Origin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &member{header: http.Header{}}
			if tt.member != nil {
				m.header[hdrVary] = tt.member
			}
			h := newHandler(t, config.CORS{AllowOrigins: []string{"https://app.example.com"}}, m)
			resp := serve(h, "GET", []string{"https://app.example.com"})
			if got := resp.Header[hdrVary]; !slices.Equal(got, tt.want) {
				t.Errorf("Vary = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMemberWrites(t *testing.T) {
	tests := []struct {
		name       string
		next       exchange.HandlerFunc
		wantStatus int
	}{
		{"nothing", func(w http.ResponseWriter, x *exchange.Request) {}, http.StatusOK},
		{"a body only", func(w http.ResponseWriter, x *exchange.Request) { io.WriteString(w, "x") }, http.StatusOK},
		{"after a flush", func(w http.ResponseWriter, x *exchange.Request) {
			w.(http.Flusher).Flush()
			w.Header().Set(hdrAllowOrigin, "https://late") // after the head: ignored
		}, http.StatusOK},
		{"an error", func(w http.ResponseWriter, x *exchange.Request) {
			http.Error(w, "nope", http.StatusBadGateway)
		}, http.StatusBadGateway},
	}
	const app = "https://app.example.com"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, config.CORS{AllowOrigins: []string{app}}, tt.next)
			resp := serve(h, "GET", []string{app})
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if got := resp.Header[hdrAllowOrigin]; !slices.Equal(got, []string{app}) {
				t.Errorf("%s = %q, want %q", hdrAllowOrigin, got, app)
			}
			if got := resp.Header[hdrVary]; !slices.Equal(got, []string{"Origin"}) {
				t.Errorf("Vary = %q, want [Origin]", got)
			}
		})
	}
}

// TestSharedValues checks that appending to the values the handler put in
// a response changes neither the request nor the next response.
func TestSharedValues(t *testing.T) {
	const app = "https://app.example.com"
	h := newHandler(t, config.CORS{AllowOrigins: []string{app}, ExposeHeaders: []string{"X-A"}}, &member{})
	r := httptest.NewRequest("GET", "/", nil)
	origins := []string{app, "https://second"}
	r.Header[hdrOrigin] = origins
	w := httptest.NewRecorder()
	h.Serve(w, &exchange.Request{HTTP: r})
	for _, name := range []string{hdrAllowOrigin, hdrAllowMethods, hdrExposeHeaders, hdrMaxAge, hdrVary} {
		w.Header().Add(name, "appended")
	}
	if want := []string{app, "https://second"}; !slices.Equal(origins, want) {
		t.Errorf("request Origin = %q, want %q", origins, want)
	}
	resp := serve(h, "GET", []string{app})
	checkHeaders(t, resp.Header, map[string][]string{hdrAllowOrigin: {app}, hdrAllowMethods: {DefaultMethods},
		hdrAllowHeaders: {DefaultHeaders}, hdrExposeHeaders: {"X-A"}, hdrMaxAge: {"1728000"}, hdrVary: {"Origin"}})
}

func TestNew(t *testing.T) {
	next := &member{}
	tests := []struct {
		name    string
		cfg     *config.CORS
		next    exchange.Handler
		wantErr string // "" for none
	}{
		{"nil configuration", nil, next, "cors configuration is nil"},
		{"nil next", &config.CORS{}, nil, "next handler is nil"},
		{"origin with a path", &config.CORS{AllowOrigins: []string{"https://a.example.com/x"}}, next, "allow_origins[0]"},
		{"wildcard not first", &config.CORS{AllowOrigins: []string{"https://a.*.example.com"}}, next, "allow_origins[0]"},
		{"upper-case scheme", &config.CORS{AllowOrigins: []string{"null", "HTTPS://a.example.com"}}, next, "allow_origins[1]"},
		{"credentials with star", &config.CORS{AllowCredentials: true}, next, "allow_credentials"},
		{"credentials with star in a list", &config.CORS{AllowOrigins: []string{"https://a.example.com", "*"}, AllowCredentials: true}, next, "allow_credentials"},
		{"bad method", &config.CORS{AllowMethods: []string{"GET PUT"}}, next, "allow_methods[0]"},
		{"bad header", &config.CORS{AllowHeaders: []string{"X-A", "X-B\r\n"}}, next, "allow_headers[1]"},
		{"bad expose header", &config.CORS{ExposeHeaders: []string{"X:A"}}, next, "expose_headers[0]"},
		{"negative max age", &config.CORS{MaxAge: config.Duration(-time.Second)}, next, "max_age"},
		{"valid list", &config.CORS{AllowOrigins: []string{"https://*.example.com", "null", "http://localhost:3000"}, AllowCredentials: true}, next, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.cfg, tt.next)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error = %v, want none", err)
			case tt.wantErr == "" && h == nil:
				t.Fatal("handler = nil, want one")
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			case tt.wantErr != "" && h != nil:
				t.Errorf("handler = %v, want nil with an error", h)
			}
		})
	}
}

// nopWriter is a ResponseWriter that keeps its header map across requests
// so that only the handler's own allocations are counted.
type nopWriter struct {
	h    http.Header
	code int
}

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) WriteHeader(code int)        { w.code = code }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }

var okNext = exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
	w.WriteHeader(http.StatusOK)
})

// memberVary is shared so that only the handler's append is counted.
var memberVary = []string{"Accept-Encoding"}

var varyNext = exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
	w.Header()[hdrVary] = memberVary
	w.WriteHeader(http.StatusOK)
})

var allocCases = []struct {
	name   string
	cfg    config.CORS
	method string
	origin string
	next   exchange.Handler
	allocs float64 // per request
}{
	{"star actual", config.CORS{}, "GET", "https://a.example.com", okNext, 1},
	{"star preflight", config.CORS{}, "OPTIONS", "https://a.example.com", okNext, 0},
	{"exact actual", config.CORS{AllowOrigins: []string{"https://a.example.com"}}, "GET", "https://a.example.com", okNext, 1},
	{"wildcard actual", config.CORS{AllowOrigins: []string{"https://*.example.com"}}, "GET", "https://a.example.com", okNext, 1},
	{"wildcard preflight", config.CORS{AllowOrigins: []string{"https://*.example.com"}}, "OPTIONS", "https://a.example.com", okNext, 0},
	{"not matching actual", config.CORS{AllowOrigins: []string{"https://*.example.com"}}, "GET", "https://evil.example", okNext, 1},
	// Appending Origin to the member's Vary costs a slice.
	{"exact actual member Vary", config.CORS{AllowOrigins: []string{"https://a.example.com"}}, "GET", "https://a.example.com", varyNext, 2},
}

func runner(t testing.TB, cfg config.CORS, method, origin string, next exchange.Handler) func() {
	h := newHandler(t, cfg, next)
	r := httptest.NewRequest(method, "/", nil)
	r.Header.Set(hdrOrigin, origin)
	x := &exchange.Request{HTTP: r}
	w := &nopWriter{h: make(http.Header, 16)}
	return func() {
		clear(w.h)
		h.Serve(w, x)
	}
}

func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled values at random")
	}
	for _, tt := range allocCases {
		t.Run(tt.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(100, runner(t, tt.cfg, tt.method, tt.origin, tt.next)); got != tt.allocs {
				t.Errorf("allocations per request = %v, want %v", got, tt.allocs)
			}
		})
	}
}

func BenchmarkServe(b *testing.B) {
	for _, tt := range allocCases {
		b.Run(tt.name, func(b *testing.B) {
			run := runner(b, tt.cfg, tt.method, tt.origin, tt.next)
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
		})
	}
}

// TestVarySpareCapacity checks that adding Origin to a member's Vary slice
// with room to spare does not write into the member's array.
func TestVarySpareCapacity(t *testing.T) {
	backing := make([]string, 2)
	backing[0] = "Accept-Encoding"
	next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
		w.Header()[hdrVary] = backing[:1]
		w.WriteHeader(http.StatusOK)
	})
	h := newHandler(t, config.CORS{AllowOrigins: []string{"https://app.example.com"}}, next)
	resp := serve(h, "GET", []string{"https://app.example.com"})
	if got, want := resp.Header[hdrVary], []string{"Accept-Encoding", "Origin"}; !slices.Equal(got, want) {
		t.Errorf("Vary = %q, want %q", got, want)
	}
	if backing[1] != "" {
		t.Errorf("member's array after its Vary = %q, want it untouched", backing[1])
	}
}

// TestOverHTTP runs a preflight and an actual request through net/http's
// own ResponseWriter.
func TestOverHTTP(t *testing.T) {
	const app = "https://app.example.com"
	m := &member{header: http.Header{hdrAllowOrigin: {"https://other"}, hdrVary: {"Accept-Encoding"}}}
	h := newHandler(t, config.CORS{AllowOrigins: []string{app}}, m)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Serve(w, &exchange.Request{HTTP: r})
	}))
	defer srv.Close()
	tests := []struct {
		method     string
		wantStatus int
		wantVary   []string
	}{
		{"OPTIONS", http.StatusNoContent, []string{"Origin"}},
		{"GET", http.StatusOK, []string{"Accept-Encoding", "Origin"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL, nil)
			req.Header.Set("origin", app)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("request error = %v, want none", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if got := resp.Header.Values(hdrAllowOrigin); !slices.Equal(got, []string{app}) {
				t.Errorf("%s = %q, want [%s]", hdrAllowOrigin, got, app)
			}
			if got := resp.Header.Values(hdrVary); !slices.Equal(got, tt.wantVary) {
				t.Errorf("Vary = %q, want %q", got, tt.wantVary)
			}
		})
	}
}
