package http1

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fastServer serves h with an http.Server fronted by a Server, as ramjetd
// does, and returns its address and the Server.
func fastServer(t *testing.T, h http.Handler) (string, *Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quiet := log.New(io.Discard, "", 0)
	std := &http.Server{Handler: h, ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 5 * time.Second, MaxHeaderBytes: 4 << 10, ErrorLog: quiet}
	fast := &Server{Handler: h, ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 5 * time.Second, MaxHeaderBytes: 8 << 10, ErrorLog: quiet}
	done := make(chan struct{})
	go func() { std.Serve(fast.Listener(ln)); close(done) }()
	t.Cleanup(func() { std.Close(); fast.Close(); <-done })
	return ln.Addr().String(), fast
}

// exchange sends raw requests on one connection and reads the answers.
func exchange(t *testing.T, addr, raw string, methods ...string) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []*http.Response
	for _, m := range methods {
		resp, err := http.ReadResponse(br, &http.Request{Method: m})
		for err == nil && resp.StatusCode < 200 {
			resp, err = http.ReadResponse(br, &http.Request{Method: m}) // past 1xx
		}
		if err != nil {
			t.Fatalf("reading answer %d: %v", len(out)+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			// Kept for the comparison: a body cut short by the server.
			resp.Header.Set("X-Test-Body-Error", err.Error())
		}
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		out = append(out, resp)
	}
	return out
}

// TestSameAnswersAsNetHTTP serves each handler with net/http alone and
// with Server in front, and compares what the client receives: status,
// fields (Date aside), framing, body, trailers and keep-alive.
func TestSameAnswersAsNetHTTP(t *testing.T) {
	big := strings.Repeat("0123456789", 1000)
	handlers := map[string]http.HandlerFunc{
		"short body":   func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") },
		"no body":      func(w http.ResponseWriter, r *http.Request) {},
		"long body":    func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) },
		"html sniffed": func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html><body>x</body></html>") },
		"declared length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			w.Header().Set("Content-Type", "text/x")
			io.WriteString(w, "hello")
		},
		"declared long body": func(w http.ResponseWriter, r *http.Request) {
			// Past the write buffer: head and body go in one writev.
			w.Header().Set("Content-Length", strconv.Itoa(4*len(big)))
			io.WriteString(w, big+big+big)
			io.WriteString(w, big)
		},
		"short of declared length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "hello")
		},
		"encoding not sniffed": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "\x1f\x8b")
		},
		"status and fields": func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Set-Cookie"] = []string{"a=1", "b=2"}
			w.Header().Set("X-Multi", " padded ")
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, "tea")
		},
		"unknown status": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(599) },
		"no content": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "3")
			w.WriteHeader(http.StatusNoContent)
			io.WriteString(w, "abc")
		},
		"not modified": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Etag", `"x"`)
			w.WriteHeader(http.StatusNotModified)
		},
		"flushed stream": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: 2\n\n")
		},
		"declared trailers": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
			io.WriteString(w, "body")
			w.Header().Set("Grpc-Status", "0")
			w.Header().Set("Grpc-Message", "fine")
		},
		"prefixed trailer": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "body")
			w.Header().Set(http.TrailerPrefix+"X-Sum", "42")
		},
		"handler closes": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		},
		"identity coding": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Transfer-Encoding", "identity")
			io.WriteString(w, "until close")
		},
		"field with newline": func(w http.ResponseWriter, r *http.Request) {
			w.Header()["X-Bad"] = []string{"a\r\nX-Injected: 1"}
			w.Header()["Bad Name"] = []string{"x"}
		},
		"early hints": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "after hints")
		},
		"echo request": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s %s %q %q host=%s close=%v cc=%q ua=%q", r.Method, r.URL.Path, r.URL.RawQuery, r.URL.RawPath, r.RequestURI,
				r.Host, r.Close, r.Header.Get("Cache-Control"), r.Header.Values("X-Dup"))
		},
	}
	requests := map[string]string{
		"GET":  "GET /p%20q?x=1 HTTP/1.1\r\nHost: example.test\r\nPragma: no-cache\r\nx-dup: 1\r\nX-Dup: 2\r\n\r\n",
		"HEAD": "HEAD /p HTTP/1.1\r\nHost: example.test\r\n\r\n",
		// A fragment and bytes a URI should carry encoded reach the
		// handler as net/http gives them; ramjetd's handler cuts the
		// fragment and forwards the rest as received.
		"GET target": "GET /p/a\"b<c>{d}|e\\f^g`h#frag?x HTTP/1.1\r\nHost: example.test\r\n\r\n",
	}
	for name, h := range handlers {
		for method, raw := range requests {
			t.Run(name+"/"+method, func(t *testing.T) {
				std := httptest.NewServer(h)
				defer std.Close()
				std.Config.ErrorLog = log.New(io.Discard, "", 0)
				var ours atomic.Bool
				fastAddr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, isOurs := w.(*response)
					ours.Store(isOurs)
					h(w, r)
				}))
				// Twice on one connection: the first answer's framing
				// must leave the connection ready for the second.
				verb, _, _ := strings.Cut(raw, " ")
				methods := []string{verb, verb}
				if name == "handler closes" || name == "identity coding" || name == "short of declared length" {
					methods = methods[:1] // the connection ends after one
				}
				twice := strings.Repeat(raw, len(methods))
				want := exchange(t, std.Listener.Addr().String(), twice, methods...)
				got := exchange(t, fastAddr, twice, methods...)
				if !ours.Load() {
					t.Fatal("the request was not served by the fast path")
				}
				for i := range got {
					compareResponses(t, got[i], want[i])
				}
			})
		}
	}
}

func compareResponses(t *testing.T, got, want *http.Response) {
	t.Helper()
	if got.StatusCode != want.StatusCode || got.Status != want.Status {
		t.Errorf("status %q, want %q", got.Status, want.Status)
	}
	for _, h := range []http.Header{got.Header, want.Header} {
		if h.Get("Date") == "" {
			t.Errorf("no Date field")
		}
		h.Del("Date")
	}
	if !sameHeader(got.Header, want.Header) {
		t.Errorf("fields\n%v\nwant\n%v", got.Header, want.Header)
	}
	if got.ContentLength != want.ContentLength || !slices.Equal(got.TransferEncoding, want.TransferEncoding) || got.Close != want.Close {
		t.Errorf("framing: length %d coding %v close %v, want %d %v %v",
			got.ContentLength, got.TransferEncoding, got.Close, want.ContentLength, want.TransferEncoding, want.Close)
	}
	gotBody, _ := io.ReadAll(got.Body)
	wantBody, _ := io.ReadAll(want.Body)
	if string(gotBody) != string(wantBody) {
		t.Errorf("body %q, want %q", gotBody, wantBody)
	}
	if !sameHeader(got.Trailer, want.Trailer) {
		t.Errorf("trailers %v, want %v", got.Trailer, want.Trailer)
	}
}

func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestParseSimple lists which heads Server takes and which it leaves to
// net/http.
func TestParseSimple(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"plain GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"fields", "GET /x?y HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nX-A: 1\r\nX-A: 2\r\nCookie: a=b\r\n\r\n", true},
		{"DELETE", "DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"POST without body", "POST /x HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"Connection close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", true},
		{"incomplete", "GET / HTTP/1.1\r\nHost: a\r\n", false},
		{"HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\n\r\n", false},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false},
		{"no Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", false},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", false},
		{"bad Host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", false},
		{"Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", false},
		{"chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"Expect", "GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n", false},
		{"WebSocket", "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", false},
		{"h2c upgrade", "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n", false},
		{"CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", false},
		{"absolute form", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"asterisk form", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", false},
		{"obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n", false},
		{"control byte in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\x01\r\n\r\n", false},
		{"bare LF", "GET / HTTP/1.1\nHost: a\n\n", false},
		{"NUL in target", "GET /\x00 HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"bad method", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"leading blank line", "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ok := parseSimple([]byte(tt.head + "GET /next"))
			if ok != tt.want {
				t.Fatalf("taken %v, want %v", ok, tt.want)
			}
			if ok && h.size != len(tt.head) {
				t.Errorf("head size %d, want %d", h.size, len(tt.head))
			}
		})
	}
	h, _ := parseSimple([]byte("GET /a HTTP/1.1\r\nhost: example.test\r\nx-lower: 1\r\nX-Lower: 2\r\nconnection: keep-alive, close\r\n\r\n"))
	if h.host != "example.test" || !slices.Equal(h.header["X-Lower"], []string{"1", "2"}) || !h.close || h.header["Host"] != nil {
		t.Errorf("parsed host %q, header %v, close %v", h.host, h.header, h.close)
	}
}

// TestHandOver checks that a connection goes to net/http at its first
// request Server does not take, with nothing lost, and that every request
// reaches the handler once and in order, pipelined ones included.
func TestHandOver(t *testing.T) {
	var served []string
	addr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		served = append(served, r.Method+" "+r.URL.Path+" "+string(body))
		fmt.Fprintf(w, "%s %s", r.URL.Path, body)
	}))
	raw := "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"GET /2 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"POST /3 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
		"GET /4 HTTP/1.1\r\nHost: a\r\n\r\n"
	answers := exchange(t, addr, raw, "GET", "GET", "POST", "GET")
	want := []string{"/1 ", "/2 ", "/3 hello", "/4 "}
	for i, resp := range answers {
		body, _ := io.ReadAll(resp.Body)
		if string(body) != want[i] {
			t.Errorf("answer %d: %q, want %q", i+1, body, want[i])
		}
	}
	if len(served) != 4 || served[2] != "POST /3 hello" {
		t.Errorf("handler saw %q", served)
	}

	// A head too large for the fast path is net/http's to refuse.
	huge := "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("x", 9<<10) + "\r\n\r\n"
	if resp := exchange(t, addr, huge, "GET")[0]; resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("huge head: status %d, want 431", resp.StatusCode)
	}
	// So is a malformed one.
	if resp := exchange(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "GET")[0]; resp.StatusCode != http.StatusBadRequest {
		t.Errorf("two Hosts: status %d, want 400", resp.StatusCode)
	}
}

// TestClientGoneCancelsContext checks that a request running when its
// client goes away sees its context canceled.
func TestClientGoneCancelsContext(t *testing.T) {
	canceled := make(chan time.Duration, 1)
	addr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		select {
		case <-r.Context().Done():
			canceled <- time.Since(start)
		case <-time.After(5 * time.Second):
			canceled <- -1
		}
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(200 * time.Millisecond)
	c.Close()
	if d := <-canceled; d < 0 {
		t.Fatal("the context was not canceled 5s after the client closed")
	}
}

// TestPipelinedDuringWatch checks that a request sent while the previous
// one is being watched is served: the byte the watch read is not lost.
func TestPipelinedDuringWatch(t *testing.T) {
	addr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(3 * watchAfter)
		}
		io.WriteString(w, r.URL.Path)
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(2 * watchAfter) // the watch reads now
	io.WriteString(c, "GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	for _, want := range []string{"/slow", "/next"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != want {
			t.Errorf("body %q, want %q", body, want)
		}
	}
}

// TestPanics checks that a panicking handler's connection is closed, with
// what was already flushed delivered and no clean end of a chunked body.
func TestPanics(t *testing.T) {
	addr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 3000)) // past the buffer: chunked, head sent
		w.(http.Flusher).Flush()
		if r.URL.Path == "/abort" {
			panic(http.ErrAbortHandler)
		}
		panic("boom")
	}))
	for _, path := range []string{"/abort", "/boom"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); err != io.ErrUnexpectedEOF {
			t.Errorf("%s: body ended with %v, want io.ErrUnexpectedEOF (a cut chunked body)", path, err)
		}
		c.Close()
	}
}

// TestShutdown checks that Shutdown closes idle connections at once and
// lets a request under way finish, answered with Connection: close.
func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int32
	addr, fast := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started.Add(1)
			<-release
		}
		io.WriteString(w, "done")
	}))
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	ibr := bufio.NewReader(idle)
	if resp, err := http.ReadResponse(ibr, nil); err != nil {
		t.Fatal(err)
	} else {
		io.ReadAll(resp.Body)
	}

	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busy.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
	for started.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}

	shut := make(chan error, 1)
	go func() { shut <- fast.Shutdown(context.Background()) }()
	if _, err := ibr.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: read %v, want EOF (closed by Shutdown)", err)
	}
	close(release)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(resp.Body); string(body) != "done" || !resp.Close {
		t.Errorf("busy connection: body %q close %v, want done and Connection: close", body, resp.Close)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Error("Shutdown did not return after the last connection ended")
	}
}

// TestIdleAndHeaderTimeouts checks that a connection that sends nothing,
// or half a head, is closed.
func TestIdleAndHeaderTimeouts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	std := &http.Server{Handler: h, ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond}
	fast := &Server{Handler: h, ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond}
	go std.Serve(fast.Listener(ln))
	defer func() { std.Close(); fast.Close() }()
	for name, send := range map[string]string{
		"silent":     "",
		"half head":  "GET / HTTP/1.1\r\nHost: a\r\n",
		"after one":  "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"slow bytes": "G",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			io.WriteString(c, send)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			io.Copy(io.Discard, c)
			if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
				t.Errorf("closed after %v, want about 200ms", d)
			}
		})
	}
}

// TestContextEndsWithHandler checks that a request's context is canceled
// when its handler returns, as net/http's is.
func TestContextEndsWithHandler(t *testing.T) {
	ctxs := make(chan context.Context, 2)
	addr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ctxs <- r.Context() }))
	exchange(t, addr, "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "GET")
	for range 2 {
		if err := (<-ctxs).Err(); err != context.Canceled {
			t.Errorf("context after the handler returned: %v, want context.Canceled", err)
		}
	}
}

// TestNoIdleTimeout checks that with no idle timeout a kept-alive
// connection lives past the first request's header timeout.
func TestNoIdleTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	std := &http.Server{Handler: h, ReadHeaderTimeout: 100 * time.Millisecond}
	fast := &Server{Handler: h, ReadHeaderTimeout: 100 * time.Millisecond}
	go std.Serve(fast.Listener(ln))
	defer func() { std.Close(); fast.Close() }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	for i := range 2 {
		if i == 1 {
			time.Sleep(300 * time.Millisecond)
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		io.ReadAll(resp.Body)
	}
}

// TestOddInputAnsweredAsNetHTTP checks inputs where the fast path must
// end as net/http does: blank lines after a POST are passed over, and a
// head cut by the end of the stream is answered 400.
func TestOddInputAnsweredAsNetHTTP(t *testing.T) {
	addr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Method) }))
	answers := exchange(t, addr, "POST / HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "POST", "GET")
	for i, want := range []string{"POST", "GET"} {
		if body, _ := io.ReadAll(answers[i].Body); answers[i].StatusCode != 200 || string(body) != want {
			t.Errorf("answer %d: %d %q, want 200 %q", i+1, answers[i].StatusCode, body, want)
		}
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n")
	c.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("cut head: %v %v, want a 400 answer", resp, err)
	}
}

// TestPanicBeforeBody checks that a handler that panics after WriteHeader
// but before any body sends no part of a head.
func TestPanicBeforeBody(t *testing.T) {
	addr, _ := fastServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		panic(http.ErrAbortHandler)
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if got, _ := io.ReadAll(c); len(got) != 0 {
		t.Errorf("received %q, want nothing", got)
	}
}

// TestDateField checks that the Date value, formatted once a second,
// follows the clock.
func TestDateField(t *testing.T) {
	for _, now := range []time.Time{time.Unix(1e9, 0), time.Unix(1e9, 5e8), time.Unix(1e9+1, 0)} {
		if got, want := dateField(now), now.UTC().Format(http.TimeFormat); got != want {
			t.Errorf("dateField(%v) = %q, want %q", now, got, want)
		}
	}
}
