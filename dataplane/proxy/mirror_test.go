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

func mirrorHandler(t *testing.T, main *upstream.Pool, limit *MirrorLimit, mirrors ...*upstream.Pool) *Handler {
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
