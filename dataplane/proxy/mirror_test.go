package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// mirrorMember sends what it receives to got and answers after delay.
func mirrorMember(t *testing.T, got chan<- seen, delay time.Duration) string {
	return startMember(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{Method: r.Method, URI: r.RequestURI, Host: r.Host, Header: r.Header, Body: string(body)}
		select {
		case <-r.Context().Done():
		case <-time.After(delay):
		}
		w.WriteHeader(http.StatusTeapot)
	})
}

func mirrorHandler(t testing.TB, main *upstream.Pool, limit *MirrorLimit, mirrors ...*upstream.Pool) *Handler {
	var ms []Mirror
	for _, p := range mirrors {
		ms = append(ms, Mirror{Pool: p})
	}
	return New([]Target{{Pool: main, Weight: 1}}, Route{Mirrors: ms}, Options{Log: quietLog, Mirrors: limit})
}

// TestMirror follows the Gateway API's HTTPRouteRequestMirror and
// HTTPRouteRequestMultipleMirrors: every mirror gets a copy of the request
// the main pool receives, whose answer alone the client gets.
func TestMirror(t *testing.T) {
	got1, got2 := make(chan seen, 4), make(chan seen, 4)
	main := buildPool(t, config.Pool{}, echoMember(t, nil))
	h := mirrorHandler(t, main, nil, buildPool(t, config.Pool{}, mirrorMember(t, got1, 0)), buildPool(t, config.Pool{}, mirrorMember(t, got2, 0)))
	r := httptest.NewRequest("POST", "http://example.com/mirror?q=1", strings.NewReader("hello"))
	r.Header.Set("X-Test", "1")
	x := exchangeFor(r)
	x.ForwardHost = "rewritten.test"
	w := serve(h, x)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200 (the main member's)", w.Code)
	}
	for i, got := range []chan seen{got1, got2} {
		select {
		case s := <-got:
			if s.Method != "POST" || s.URI != "/mirror?q=1" || s.Host != "rewritten.test" || s.Body != "hello" || s.Header.Get("X-Test") != "1" {
				t.Errorf("mirror %d received %+v, want the forwarded request", i, s)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("mirror %d received nothing", i)
		}
	}
}

// TestMirrorNeverDelaysNorFails checks that a slow or unreachable mirror
// changes nothing for the client.
func TestMirrorNeverDelaysNorFails(t *testing.T) {
	got := make(chan seen, 1)
	main := buildPool(t, config.Pool{}, echoMember(t, nil))
	slowMirror := buildPool(t, config.Pool{}, mirrorMember(t, got, 3*time.Second))
	down := buildPool(t, config.Pool{}, closedAddr(t))
	h := mirrorHandler(t, main, nil, slowMirror, down)
	start := time.Now()
	w := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil)))
	if w.Code != http.StatusOK || time.Since(start) > time.Second {
		t.Errorf("got %d after %s; want 200 at once", w.Code, time.Since(start))
	}
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow mirror received nothing")
	}
}

// TestMirrorLimit checks the bound of copies in flight and that streamed
// bodies are not copied.
func TestMirrorLimit(t *testing.T) {
	got := make(chan seen, 8)
	main := buildPool(t, config.Pool{}, echoMember(t, nil))
	limit := NewMirrorLimit(1)
	h := mirrorHandler(t, main, limit, buildPool(t, config.Pool{}, mirrorMember(t, got, 2*time.Second)))
	for range 3 {
		if w := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil))); w.Code != http.StatusOK {
			t.Fatalf("status %d, want 200", w.Code)
		}
	}
	<-got
	if n, dropped := limit.InFlight(), limit.Dropped.Load(); n != 1 || dropped != 2 {
		t.Errorf("in flight %d, dropped %d; want 1, 2", n, dropped)
	}
	select {
	case s := <-got:
		t.Errorf("a copy over the bound was sent: %+v", s)
	case <-time.After(200 * time.Millisecond):
	}

	streamedGot := make(chan seen, 1)
	h = mirrorHandler(t, main, nil, buildPool(t, config.Pool{}, mirrorMember(t, streamedGot, 0)))
	r := httptest.NewRequest("PUT", "/", io.MultiReader(strings.NewReader("a"), strings.NewReader("b")))
	r.ContentLength = -1
	if w := serve(h, exchangeFor(r)); w.Code != http.StatusOK {
		t.Fatalf("streamed: status %d, want 200", w.Code)
	}
	select {
	case s := <-streamedGot:
		t.Errorf("a streamed body was copied: %+v", s)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestMirrorSampled(t *testing.T) {
	tests := []struct {
		m        Mirror
		min, max int // of 10000
	}{
		{Mirror{}, 10000, 10000},
		{Mirror{Numerator: 0, Denominator: 100}, 0, 0},
		{Mirror{Numerator: 100, Denominator: 100}, 10000, 10000},
		{Mirror{Numerator: 50, Denominator: 100}, 4500, 5500},
		{Mirror{Numerator: 1, Denominator: 10}, 800, 1200},
	}
	for _, tt := range tests {
		n := 0
		for range 10000 {
			if tt.m.sampled() {
				n++
			}
		}
		if n < tt.min || n > tt.max {
			t.Errorf("%d/%d: %d of 10000 sampled, want %d..%d", tt.m.Numerator, tt.m.Denominator, n, tt.min, tt.max)
		}
	}
}

// TestMirrorCopy checks what a mirror changes in its copies (ingress-nginx's
// mirror-target, mirror-host, mirror-request-body): the Host, a fixed path
// or the client's request URI before a rewrite, and the body.
func TestMirrorCopy(t *testing.T) {
	tests := []struct {
		name   string
		mirror Mirror
		// uri, host and body the copy must have.
		uri, host, body string
	}{
		{name: "as forwarded", mirror: Mirror{}, uri: "/rewritten?q=1", host: "rewritten.test", body: "hello"},
		{name: "host", mirror: Mirror{Host: "shadow.example"}, uri: "/rewritten?q=1", host: "shadow.example", body: "hello"},
		{name: "fixed path keeps the query", mirror: Mirror{Path: "/copy/a b"}, uri: "/copy/a%20b?q=1", host: "rewritten.test", body: "hello"},
		{name: "request URI before the rewrite", mirror: Mirror{RequestURI: true}, uri: "/orig%2Fpath?q=1", host: "rewritten.test", body: "hello"},
		{name: "no body", mirror: Mirror{NoBody: true, Host: "shadow.example"}, uri: "/rewritten?q=1", host: "shadow.example", body: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan seen, 1)
			main := buildPool(t, config.Pool{}, echoMember(t, nil))
			m := tc.mirror
			m.Pool = buildPool(t, config.Pool{}, mirrorMember(t, got, 0))
			h := New([]Target{{Pool: main, Weight: 1}}, Route{Mirrors: []Mirror{m}}, Options{Log: quietLog})
			r := httptest.NewRequest("POST", "http://example.com/orig%2Fpath?q=1", strings.NewReader("hello"))
			x := exchangeFor(r)
			x.ForwardHost, x.ForwardPath = "rewritten.test", "/rewritten"
			if w := serve(h, x); w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", w.Code)
			}
			select {
			case s := <-got:
				if s.URI != tc.uri || s.Host != tc.host || s.Body != tc.body {
					t.Errorf("copy %s %s body %q; want %s %s body %q", s.Host, s.URI, s.Body, tc.host, tc.uri, tc.body)
				}
				if cl := s.Header.Get("Content-Length"); tc.body == "" && (cl != "" && cl != "0" || s.Header.Get("Transfer-Encoding") != "") {
					t.Errorf("a copy without body announces one: %v", s.Header)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the mirror received nothing")
			}
		})
	}
}

// TestMirrorBodyBound checks that a body over MirrorBodyLimit, or a
// streamed one, is copied only by a mirror that sends no body, and that the
// client's answer never waits for a slow mirror.
func TestMirrorBodyBound(t *testing.T) {
	withBody, noBody := make(chan seen, 2), make(chan seen, 2)
	main := buildPool(t, config.Pool{}, echoMember(t, nil))
	mirrors := []Mirror{
		{Pool: buildPool(t, config.Pool{}, mirrorMember(t, withBody, 3*time.Second))},
		{Pool: buildPool(t, config.Pool{}, mirrorMember(t, noBody, 3*time.Second)), NoBody: true},
	}
	// With request buffering the large body is read whole, over the
	// bound; without, it is streamed, as a body of unknown length is.
	buffered := New([]Target{{Pool: main, Weight: 1}}, Route{Mirrors: mirrors, BufferRequest: 1 << 20}, Options{Log: quietLog})
	streaming := New([]Target{{Pool: main, Weight: 1}}, Route{Mirrors: mirrors}, Options{Log: quietLog})
	large := strings.Repeat("x", MirrorBodyLimit+1)
	streamed := httptest.NewRequest("PUT", "/streamed", io.MultiReader(strings.NewReader("a"), strings.NewReader("b")))
	streamed.ContentLength = -1
	for _, tc := range []struct {
		h *Handler
		r *http.Request
	}{
		{buffered, httptest.NewRequest("PUT", "/large", strings.NewReader(large))},
		{streaming, streamed},
	} {
		start := time.Now()
		if w := serve(tc.h, exchangeFor(tc.r)); w.Code != http.StatusOK || time.Since(start) > time.Second {
			t.Fatalf("%s: status %d after %s, want 200 at once", tc.r.URL.Path, w.Code, time.Since(start))
		}
	}
	for range 2 {
		select {
		case s := <-noBody:
			if s.Body != "" {
				t.Errorf("the mirror without body received %d bytes", len(s.Body))
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the mirror without body received nothing")
		}
	}
	select {
	case s := <-withBody:
		t.Errorf("a body over the bound was copied: %s, %d bytes", s.URI, len(s.Body))
	case <-time.After(200 * time.Millisecond):
	}
}

// TestMirrorNameToLoopback checks that a mirror whose member is a DNS name
// resolving to loopback (mirror-target: http://localhost:...) sends
// nothing there: the address rule refuses what the name resolves to, and
// the failed copy is counted.
func TestMirrorNameToLoopback(t *testing.T) {
	got := make(chan seen, 1)
	target := mirrorMember(t, got, 0)
	_, port, _ := strings.Cut(target, ":")
	main := buildPool(t, config.Pool{}, echoMember(t, nil))
	mirror := buildPool(t, config.Pool{}, "localhost:"+port)
	h := mirrorHandler(t, main, nil, mirror)
	if w := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil))); w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200", w.Code)
	}
	deadline := time.Now().Add(5 * time.Second)
	for mirror.Members().Member(0).Stats.Failures.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the copy to a name resolving to loopback did not fail")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case s := <-got:
		t.Errorf("the loopback listener received a copy: %+v", s)
	default:
	}
}

// BenchmarkMirror proxies requests to a member while each is copied to a
// mirror (fire and forget): the cost a mirror adds to the request path,
// against the same requests without one. A POST's body of 1 KiB is kept
// for the copy; the copies' answers are read by their own goroutines.
//
//	go test -run '^$' -bench BenchmarkMirror -benchmem ./dataplane/proxy
func BenchmarkMirror(b *testing.B) {
	discard := startMember(b, func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
	body := strings.Repeat("x", 1024)
	for _, tc := range []struct {
		name, method string
		mirror       bool
	}{{"GET without mirror", "GET", false}, {"GET mirrored", "GET", true}, {"POST mirrored", "POST", true}} {
		b.Run(tc.name, func(b *testing.B) {
			main := buildPool(b, config.Pool{}, discard)
			var mirrors []*upstream.Pool
			if tc.mirror {
				mirrors = append(mirrors, buildPool(b, config.Pool{}, discard))
			}
			h := mirrorHandler(b, main, nil, mirrors...)
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(tc.method, "http://example.com/m", strings.NewReader(body))
				if w := serve(h, exchangeFor(r)); w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
