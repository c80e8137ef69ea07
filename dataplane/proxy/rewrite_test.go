package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func rules(t testing.TB, rs ...config.TextRewrite) []TextRewrite {
	out := make([]TextRewrite, len(rs))
	for i, r := range rs {
		var err error
		if out[i], err = NewTextRewrite(r); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestResponseRewriteHeaders(t *testing.T) {
	rw := &ResponseRewrite{
		Redirects:     rules(t, config.TextRewrite{From: "http://members.internal/", To: "https://app.example.com/"}),
		CookieDomains: rules(t, config.TextRewrite{From: "members.internal", To: "example.com"}),
		CookiePaths:   rules(t, config.TextRewrite{From: "^/app(/.*)$", To: "$1x", Regex: true}),
	}
	for _, tt := range []struct{ header, in, want string }{
		{"Location", "http://members.internal/a?b=1", "https://app.example.com/a?b=1"},
		{"Location", "HTTP://members.internal/a", "HTTP://members.internal/a"}, // case-sensitive prefix
		{"Location", "/relative", "/relative"},
		{"Refresh", "5; URL=http://members.internal/b", "5; URL=https://app.example.com/b"},
		{"Refresh", "5", "5"},
		{"Set-Cookie", "s=1; Domain=.Members.Internal; Path=/app/x; HttpOnly", "s=1; Domain=.example.com; Path=/xx; HttpOnly"},
		{"Set-Cookie", "s=1; domain=members.internal", "s=1; domain=example.com"},
		{"Set-Cookie", "s=1; Domain=sub.members.internal; path=/other", "s=1; Domain=sub.members.internal; path=/other"},
		{"Set-Cookie", "Domain=members.internal; Path=/app/", "Domain=members.internal; Path=/x"}, // the name=value pair is never touched
		{"Set-Cookie", "s=1", "s=1"},
	} {
		h := http.Header{tt.header: {tt.in}}
		rw.apply(h)
		if got := h.Get(tt.header); got != tt.want {
			t.Errorf("%s: %q became %q, want %q", tt.header, tt.in, got, tt.want)
		}
	}
}

func TestResponseRewriteRegexRedirect(t *testing.T) {
	rw := &ResponseRewrite{Redirects: rules(t, config.TextRewrite{From: "(?i)^https?://[^/]+/(.*)$", To: "/app/$1", Regex: true})}
	h := http.Header{"Location": {"HTTPS://member:8443/login?x=$1"}}
	rw.apply(h)
	if got := h.Get("Location"); got != "/app/login?x=$1" {
		t.Errorf("Location = %q, want /app/login?x=$1", got)
	}
}

// TestResponseRewriteThroughTheProxy checks the rewrite on a member's real
// answer.
func TestResponseRewriteThroughTheProxy(t *testing.T) {
	member := startMember(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://members.internal/next")
		w.Header().Add("Set-Cookie", "a=1; Path=/; Domain=members.internal")
		w.WriteHeader(302)
	})
	p := buildPool(t, config.Pool{}, member)
	rw := &ResponseRewrite{
		Redirects:     rules(t, config.TextRewrite{From: "http://members.internal/", To: "/shop/"}),
		CookieDomains: rules(t, config.TextRewrite{From: "members.internal", To: "shop.example.com"}),
		CookiePaths:   rules(t, config.TextRewrite{From: "/", To: "/shop/"}),
	}
	h := New([]Target{{Pool: p, Weight: 1}}, Route{Rewrite: rw}, Options{Log: quietLog})
	w := serve(h, exchangeFor(httptest.NewRequest("GET", "http://example.com/", nil)))
	if got := w.Header().Get("Location"); w.Code != 302 || got != "/shop/next" {
		t.Errorf("answer %d with Location %q, want 302 /shop/next", w.Code, got)
	}
	if got := w.Header().Get("Set-Cookie"); got != "a=1; Path=/shop/; Domain=shop.example.com" {
		t.Errorf("Set-Cookie = %q", got)
	}
}

func BenchmarkResponseRewrite(b *testing.B) {
	rw := &ResponseRewrite{
		Redirects:     rules(b, config.TextRewrite{From: "http://members.internal/", To: "https://app.example.com/"}),
		CookieDomains: rules(b, config.TextRewrite{From: "members.internal", To: "example.com"}),
		CookiePaths:   rules(b, config.TextRewrite{From: "/app/", To: "/"}),
	}
	for _, bc := range []struct {
		name string
		h    http.Header
	}{
		{"no matching header", http.Header{"Content-Type": {"text/html"}}},
		{"location", http.Header{"Location": {"http://members.internal/a"}}},
		{"cookie", http.Header{"Set-Cookie": {"s=1; Domain=members.internal; Path=/app/x; HttpOnly"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			orig := bc.h
			h := http.Header{}
			for b.Loop() {
				for k, v := range orig {
					h[k] = append(h[k][:0], v...)
				}
				rw.apply(h)
			}
		})
	}
}

// TestRequestBuffering checks that with request buffering the member sees
// the request only once its whole body arrived, with a Content-Length.
func TestRequestBuffering(t *testing.T) {
	entered := make(chan seen, 1)
	member := startMember(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		entered <- seen{Body: string(body), ContentLength: r.ContentLength}
	})
	p := buildPool(t, config.Pool{}, member)
	for _, tt := range []struct {
		name       string
		bound      int64
		wantLength int64 // -1: streamed
		early      bool  // the member sees the request before the body ended
	}{
		{"whole body", 1 << 20, 200000, false},
		{"beyond the bound", 100000, -1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := New([]Target{{Pool: p, Weight: 1}}, Route{BufferRequest: tt.bound}, Options{Log: quietLog})
			pr, pw := io.Pipe()
			r := httptest.NewRequest("POST", "http://example.com/", pr)
			r.ContentLength = -1 // chunked
			done := make(chan int)
			go func() { done <- serve(h, exchangeFor(r)).Code }()
			first := bytes.Repeat([]byte("a"), 150000)
			pw.Write(first)
			select {
			case s := <-entered:
				if !tt.early {
					t.Fatalf("the member got the request (%d bytes) before the body ended", len(s.Body))
				}
				t.Fatalf("the member answered before the body ended")
			case <-time.After(300 * time.Millisecond):
			}
			pw.Write(bytes.Repeat([]byte("b"), 50000))
			pw.Close()
			if code := <-done; code != 200 {
				t.Fatalf("status %d", code)
			}
			s := <-entered
			if want := string(first) + strings.Repeat("b", 50000); s.Body != want || s.ContentLength != tt.wantLength {
				t.Errorf("member got %d bytes with Content-Length %d, want %d bytes with %d", len(s.Body), s.ContentLength, len(want), tt.wantLength)
			}
		})
	}
}

// TestResponseBuffering checks that a buffered answer frees the member
// while the client has not read a byte, and that without buffering the
// member waits for the client.
func TestResponseBuffering(t *testing.T) {
	const size = 32 << 20 // more than the sockets' buffers hold
	for _, tt := range []struct {
		name      string
		bound     int64
		wantFreed bool
	}{
		{"buffered", 48 << 20, true},
		{"streamed", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			finished := make(chan struct{}, 1)
			member := startMember(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "33554432")
				io.Copy(w, io.LimitReader(zeros{}, size))
				finished <- struct{}{}
			})
			p := buildPool(t, config.Pool{}, member)
			h := New([]Target{{Pool: p, Weight: 1}}, Route{BufferResponse: tt.bound}, Options{Log: quietLog})
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, exchangeFor(r)) }))
			defer front.Close()
			resp, err := http.Get(front.URL)
			if err != nil && tt.wantFreed {
				t.Fatal(err)
			}
			freed := false
			select {
			case <-finished:
				freed = true
			case <-time.After(time.Second):
			}
			if freed != tt.wantFreed {
				t.Errorf("member finished while the client read nothing: %v, want %v", freed, tt.wantFreed)
			}
			if resp != nil {
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != size {
					t.Errorf("client read %d bytes, want %d", n, size)
				}
			}
		})
	}
}

func TestBufferable(t *testing.T) {
	for _, tt := range []struct {
		header http.Header
		want   bool
	}{
		{http.Header{"Content-Type": {"text/html"}}, true},
		{http.Header{"X-Accel-Buffering": {"no"}}, false},
		{http.Header{"X-Accel-Buffering": {"yes"}}, true},
		{http.Header{"Content-Type": {"text/event-stream"}}, false},
		{http.Header{"Content-Type": {"application/grpc"}}, false},
	} {
		if got := bufferable(&http.Response{Header: tt.header}); got != tt.want {
			t.Errorf("bufferable(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
