package http1

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
)

// newClient returns a Client that dials plainly, with a long idle timeout.
func newClient(t *testing.T) *Client {
	t.Helper()
	var d net.Dialer
	c := &Client{Dial: d.DialContext, MaxIdlePerHost: 8, IdleTimeout: time.Minute, ResponseHeaderTimeout: 5 * time.Second}
	t.Cleanup(c.Close)
	return c
}

// countingServer is an httptest server that counts the connections it
// accepted and closed.
type countingServer struct {
	*httptest.Server
	opened, closed atomic.Int32
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.opened.Add(1)
		case http.StateClosed:
			s.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// get sends a request and returns the response with its body read, and
// whether the connection was a kept-alive one.
func get(t *testing.T, c *Client, method, url string) (resp *http.Response, body string, reused bool) {
	t.Helper()
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = c.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return resp, string(b), reused
}

// eventually waits up to 2s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after 2s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEligible(t *testing.T) {
	tests := []struct {
		name string
		req  func() *http.Request
		want bool
	}{
		{"GET", func() *http.Request { return newReq("GET", nil) }, true},
		{"HEAD", func() *http.Request { return newReq("HEAD", nil) }, true},
		{"OPTIONS", func() *http.Request { return newReq("OPTIONS", nil) }, true},
		{"DELETE", func() *http.Request { return newReq("DELETE", nil) }, true},
		{"TRACE", func() *http.Request { return newReq("TRACE", nil) }, true},
		{"GET with NoBody", func() *http.Request { r := newReq("GET", nil); r.Body = http.NoBody; return r }, true},
		{"POST without body", func() *http.Request { return newReq("POST", nil) }, false},
		{"PUT without body", func() *http.Request { return newReq("PUT", nil) }, false},
		{"PATCH", func() *http.Request { return newReq("PATCH", nil) }, false},
		{"GET with a body", func() *http.Request { return newReq("GET", strings.NewReader("x")) }, false},
		{"GET with unknown length", func() *http.Request { r := newReq("GET", nil); r.ContentLength = -1; return r }, false},
		{"upgrade", func() *http.Request { r := newReq("GET", nil); r.Header.Set("Upgrade", "websocket"); return r }, false},
		{"Expect", func() *http.Request { r := newReq("GET", nil); r.Header.Set("Expect", "100-continue"); return r }, false},
		{"Close", func() *http.Request { r := newReq("GET", nil); r.Close = true; return r }, false},
		{"trailers", func() *http.Request { r := newReq("GET", nil); r.Trailer = http.Header{"X": nil}; return r }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Eligible(tt.req()); got != tt.want {
				t.Errorf("Eligible = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := newClient(t).RoundTrip(newReq("POST", nil)); !errors.Is(err, errNotEligible) {
		t.Errorf("RoundTrip(POST) = %v, want errNotEligible", err)
	}
}

func newReq(method string, body io.Reader) *http.Request {
	r, err := http.NewRequest(method, "http://127.0.0.1:1/", body)
	if err != nil {
		panic(err)
	}
	return r
}

// TestRequestHead checks the bytes of the request head: what net/http's
// Transport would write for the same request.
func TestRequestHead(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(r *http.Request)
		target string
		want   []string // header lines expected, in any order
		absent []string // header names that must not be sent
	}{
		{name: "plain", target: "/a/b?x=1&y", edit: func(r *http.Request) {},
			want: []string{"Host: example.test", "User-Agent: " + defaultUserAgent}},
		{name: "escaped path kept", target: "/a%2Fb/c%20d?q=%2F",
			edit: func(r *http.Request) {}, want: []string{"Host: example.test"}},
		{name: "forwarded Host", target: "/", edit: func(r *http.Request) { r.Host = "other.test:8080" },
			want: []string{"Host: other.test:8080"}},
		{name: "empty User-Agent sends none", target: "/", edit: func(r *http.Request) { r.Header["User-Agent"] = []string{""} },
			absent: []string{"User-Agent"}},
		{name: "User-Agent kept", target: "/", edit: func(r *http.Request) { r.Header.Set("User-Agent", "curl/8") },
			want: []string{"User-Agent: curl/8"}},
		{name: "values trimmed, repeated fields kept", target: "/", edit: func(r *http.Request) {
			r.Header["X-A"] = []string{"  one\t", "two"}
		}, want: []string{"X-A: one", "X-A: two"}},
		{name: "framing headers never sent", target: "/", edit: func(r *http.Request) {
			r.Header.Set("Content-Length", "10")
			r.Header.Set("Transfer-Encoding", "chunked")
			r.Header.Set("Trailer", "X")
			r.Header.Set("Host", "spoofed.test")
		}, want: []string{"Host: example.test"}, absent: []string{"Content-Length", "Transfer-Encoding", "Trailer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			heads := make(chan string, 1)
			addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				heads <- readHead(br)
				io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
			})
			req, _ := http.NewRequest("GET", "http://"+addr+tt.target, nil)
			req.Host = "example.test"
			tt.edit(req)
			resp, err := newClient(t).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			head := <-heads
			lines := strings.Split(strings.TrimSuffix(head, "\r\n\r\n"), "\r\n")
			if want := "GET " + tt.target + " HTTP/1.1"; lines[0] != want {
				t.Errorf("request line %q, want %q", lines[0], want)
			}
			for _, w := range tt.want {
				if !slices.Contains(lines[1:], w) {
					t.Errorf("head lacks %q:\n%s", w, head)
				}
			}
			for _, name := range tt.absent {
				for _, l := range lines[1:] {
					if strings.HasPrefix(strings.ToLower(l), strings.ToLower(name)+":") {
						t.Errorf("head has %q, want no %s", l, name)
					}
				}
			}
			if n := strings.Count(strings.ToLower(head), "\r\nhost:"); n != 1 {
				t.Errorf("%d Host fields, want 1", n)
			}
		})
	}
}

// TestInvalidRequestsNotSent checks that a header net/http would refuse is
// refused before anything is written.
func TestInvalidRequestsNotSent(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *http.Request)
		want error
	}{
		{"CR LF in a value", func(r *http.Request) { r.Header["X-A"] = []string{"a\r\nX-Injected: 1"} }, errInvalidHeaderValue},
		{"NUL in a value", func(r *http.Request) { r.Header["X-A"] = []string{"a\x00"} }, errInvalidHeaderValue},
		{"space in a name", func(r *http.Request) { r.Header["X A"] = []string{"a"} }, errInvalidHeaderName},
		{"CR LF in User-Agent", func(r *http.Request) { r.Header["User-Agent"] = []string{"a\r\nb: c"} }, errInvalidHeaderValue},
		{"bad Host", func(r *http.Request) { r.Host = "a b" }, errInvalidHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan int, 1)
			addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				b, _ := io.ReadAll(br)
				got <- len(b)
			})
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			tt.edit(req)
			if _, err := newClient(t).RoundTrip(req); !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if n := <-got; n != 0 {
				t.Errorf("the member received %d bytes, want none", n)
			}
		})
	}
}

// TestKeepAlive checks that sequential requests share one connection,
// whatever the framing of the responses that end cleanly.
func TestKeepAlive(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			w.Write([]byte("a"))
			w.(http.Flusher).Flush()
			w.Write([]byte("b"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/not-modified":
			w.WriteHeader(http.StatusNotModified)
		default:
			io.WriteString(w, "hello")
		}
	})
	c := newClient(t)
	paths := []string{"/", "/chunked", "/empty", "/not-modified"}
	for i := range 40 {
		method := "GET"
		if i%5 == 4 {
			method = "HEAD"
		}
		path := paths[i%len(paths)]
		resp, body, reused := get(t, c, method, srv.URL+path)
		if i > 0 && !reused {
			t.Errorf("request %d (%s %s): new connection, want the kept-alive one", i, method, path)
		}
		wantBody := map[string]string{"/": "hello", "/chunked": "ab"}[path]
		if method == "HEAD" {
			wantBody = ""
		}
		if body != wantBody {
			t.Errorf("%s %s: status %d body %q, want %q", method, path, resp.StatusCode, body, wantBody)
		}
	}
	if n := srv.opened.Load(); n != 1 {
		t.Errorf("%d connections for 40 sequential requests, want 1", n)
	}
}

// TestTrailers checks that a chunked response's trailers are there once
// its body was read.
func TestTrailers(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Grpc-Status")
		io.WriteString(w, "body")
		w.Header().Set("Grpc-Status", "0")
	})
	resp, body, _ := get(t, newClient(t), "GET", srv.URL)
	if body != "body" || resp.Trailer.Get("Grpc-Status") != "0" {
		t.Errorf("body %q trailer %v, want \"body\" and Grpc-Status 0", body, resp.Trailer)
	}
}

// TestConnectionsNotReused checks the responses after which a connection
// cannot carry another request.
func TestConnectionsNotReused(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		answer  string
		partial bool // close the body before its end
	}{
		{name: "Connection: close", answer: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"},
		{name: "HTTP/1.0", answer: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		{name: "body until close", answer: "HTTP/1.1 200 OK\r\n\r\nok"},
		{name: "body closed before its end", answer: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nok", partial: true},
		{name: "bytes past the length", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n"},
		{name: "body after HEAD", method: "HEAD", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				readHead(br)
				io.WriteString(c, tt.answer)
				if tt.name == "body until close" {
					c.(*net.TCPConn).CloseWrite()
				}
				io.Copy(io.Discard, br) // until the client closes
			})
			c := newClient(t)
			method := cmp.Or(tt.method, "GET")
			req, _ := http.NewRequest(method, "http://"+addr+"/", nil)
			resp, err := c.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.partial {
				resp.Body.Read(make([]byte, 1))
			} else if b, _ := io.ReadAll(resp.Body); method == "GET" && string(b) != "ok" {
				t.Errorf("body %q, want ok", b)
			}
			resp.Body.Close()
			if n := idleCount(c, addr); n != 0 {
				t.Errorf("%d idle connections kept, want none", n)
			}
		})
	}
}

// TestTLSReadAheadNotReused checks that what crypto/tls read past a
// response's end (neither in the client's buffer nor on the socket) keeps
// the connection from being used again.
func TestTLSReadAheadNotReused(t *testing.T) {
	big := strings.Repeat("x", 8<<10)
	tests := []struct {
		name, method string
		writes       []string // each one TLS record or more
	}{
		{"body after HEAD, its own record", "HEAD", []string{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "wrong"}},
		{"bytes past a long body", "GET", []string{"HTTP/1.1 200 OK\r\nContent-Length: 8192\r\n\r\n" + big + "HTTP/1.1 200 OK\r\n\r\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, dial := rawTLSServer(t, func(c net.Conn, br *bufio.Reader) {
				readHead(br)
				// The records leave in one TCP write, so that the
				// client's TLS reads them together.
				raw := c.(*tls.Conn).NetConn().(*batchConn)
				raw.batch = true
				for _, w := range tt.writes {
					io.WriteString(c, w)
				}
				raw.flush()
				io.Copy(io.Discard, br)
			})
			c := newClient(t)
			c.Dial = dial
			req, _ := http.NewRequest(tt.method, "http://"+addr+"/", nil)
			resp, err := c.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
			if n := idleCount(c, addr); n != 0 {
				t.Errorf("%d idle connections kept, want none", n)
			}
		})
	}

	// A clean TLS exchange keeps its connection.
	addr, dial := rawTLSServer(t, func(c net.Conn, br *bufio.Reader) {
		for readHead(br) != "" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	c := newClient(t)
	c.Dial = dial
	get(t, c, "GET", "http://"+addr+"/")
	if _, body, reused := get(t, c, "GET", "http://"+addr+"/"); body != "ok" || !reused {
		t.Errorf("second request over TLS: %q, reused %v; want ok over the kept connection", body, reused)
	}
}

// rawTLSServer is rawServer over TLS, with a dial function that trusts it.
func rawTLSServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) (string, func(context.Context, string, string) (net.Conn, error)) {
	t.Helper()
	cert, err := certs.SelfSigned("member", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	addr := rawServer(t, func(c net.Conn, _ *bufio.Reader) {
		tc := tls.Server(&batchConn{Conn: c}, &tls.Config{Certificates: []tls.Certificate{*cert}})
		serve(tc, bufio.NewReader(tc))
	})
	d := &tls.Dialer{Config: &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}}
	return addr, d.DialContext
}

// batchConn holds what is written while batch is set, until flush.
type batchConn struct {
	net.Conn
	batch bool
	held  []byte
}

func (b *batchConn) Write(p []byte) (int, error) {
	if !b.batch {
		return b.Conn.Write(p)
	}
	b.held = append(b.held, p...)
	return len(p), nil
}

func (b *batchConn) flush() {
	b.Conn.Write(b.held)
	b.held, b.batch = nil, false
}

func idleCount(c *Client, addr string) int {
	h, ok := c.hosts.Load(addr)
	if !ok {
		return 0
	}
	return len(h.(*host).idle)
}

// TestUnsolicitedOutputNotRead checks that what a member sends on an idle
// kept-alive connection (a late 408, bytes after a response) is never read
// as the answer to the next request.
func TestUnsolicitedOutputNotRead(t *testing.T) {
	for name, late := range map[string]string{
		"idle 408":      "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n",
		"a second body": "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nwrong",
	} {
		t.Run(name, func(t *testing.T) {
			sent := make(chan struct{})
			var conns atomic.Int32
			addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				n := conns.Add(1)
				readHead(br)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				if n == 1 {
					time.Sleep(20 * time.Millisecond)
					io.WriteString(c, late)
					close(sent)
				}
				io.Copy(io.Discard, br)
			})
			c := newClient(t)
			get(t, c, "GET", "http://"+addr+"/")
			<-sent
			time.Sleep(20 * time.Millisecond)
			resp, body, _ := get(t, c, "GET", "http://"+addr+"/")
			if resp.StatusCode != 200 || body != "ok" {
				t.Errorf("answer %d %q, want 200 ok", resp.StatusCode, body)
			}
		})
	}
}

// TestRequestTimeoutAnswered checks that a 408 sent after the request
// reached the member is its answer, passed on and not sent again (a long
// poll that ends in 408, say); a 408 sent while the connection was idle is
// TestUnsolicitedOutputNotRead's.
func TestRequestTimeoutAnswered(t *testing.T) {
	var requests atomic.Int32
	addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		readHead(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		readHead(br)
		requests.Add(1)
		io.WriteString(c, "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	})
	c := newClient(t)
	get(t, c, "GET", "http://"+addr+"/")
	resp, _, reused := get(t, c, "GET", "http://"+addr+"/")
	if resp.StatusCode != http.StatusRequestTimeout || !reused || requests.Load() != 1 {
		t.Errorf("answer %d on a reused connection %v after %d tries, want 408, true, 1", resp.StatusCode, reused, requests.Load())
	}
}

// TestResponseHeadLimit checks that a member cannot make the client hold a
// head larger than MaxResponseHeaderBytes.
func TestResponseHeadLimit(t *testing.T) {
	addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		readHead(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("x", 64<<10)+"\r\nContent-Length: 0\r\n\r\n")
	})
	c := newClient(t)
	c.MaxResponseHeaderBytes = 16 << 10
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	if _, err := c.RoundTrip(req); !errors.Is(err, errHeadTooLarge) {
		t.Fatalf("error %v, want errHeadTooLarge", err)
	}
}

// TestBodyErrorSticky checks that a body cut short keeps failing.
func TestBodyErrorSticky(t *testing.T) {
	addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		readHead(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
	})
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	resp, err := newClient(t).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != io.ErrUnexpectedEOF {
		t.Fatalf("first read: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := resp.Body.Read(make([]byte, 1)); err != io.ErrUnexpectedEOF {
		t.Errorf("read after the error: %v, want io.ErrUnexpectedEOF again", err)
	}
}

// TestClosedIdleConnectionReplaced checks that a kept-alive connection the
// member closed while idle is replaced, and the request sent again, without
// the caller seeing an error; a new connection closed without an answer is
// an error at once.
func TestClosedIdleConnectionReplaced(t *testing.T) {
	var conns atomic.Int32
	closed := make(chan struct{}, 3)
	addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		n := conns.Add(1)
		readHead(br)
		if n < 3 {
			// Answered and kept alive for the client, then closed
			// while idle: a second request on it finds it closed.
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		} // else a new connection closed without an answer
		c.Close()
		closed <- struct{}{}
	})
	c := newClient(t)
	get(t, c, "GET", "http://"+addr+"/")
	<-closed
	_, body, _ := get(t, c, "GET", "http://"+addr+"/")
	if body != "ok" || conns.Load() != 2 {
		t.Fatalf("body %q over %d connections, want ok over 2", body, conns.Load())
	}
	<-closed
	// The idle connection is closed (replaced once), and its replacement,
	// a new connection, is closed without an answer.
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	if _, err := c.RoundTrip(req); !isClosedConn(err) {
		t.Fatalf("error %v, want the member's close", err)
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3 (no new connection retried)", n)
	}
}

// TestResponseHeaderTimeout checks the wait for a silent member.
func TestResponseHeaderTimeout(t *testing.T) {
	addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		readHead(br)
		io.Copy(io.Discard, br)
	})
	c := newClient(t)
	c.ResponseHeaderTimeout = 100 * time.Millisecond
	start := time.Now()
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	_, err := c.RoundTrip(req)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("error %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %v, want about 100ms", d)
	}
}

// TestContextEnds checks that a request whose context ends stops waiting,
// for the head and for the body, and that its connection is not kept.
func TestContextEnds(t *testing.T) {
	for _, during := range []string{"head", "body"} {
		t.Run(during, func(t *testing.T) {
			var conns atomic.Int32
			addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				conns.Add(1)
				readHead(br)
				if during == "body" {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab")
				}
				io.Copy(io.Discard, br)
			})
			c := newClient(t)
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
			time.AfterFunc(50*time.Millisecond, cancel)
			start := time.Now()
			resp, err := c.RoundTrip(req)
			if during == "head" {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v, want context.Canceled", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					t.Fatal("the body ended cleanly after the context ended, want an error")
				}
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("returned after %v, want about 50ms", d)
			}
			get := func() {
				req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
				req = req.WithContext(context.Background())
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				if resp, err := c.RoundTrip(req.WithContext(ctx)); err == nil {
					resp.Body.Close()
				}
			}
			get()
			if n := conns.Load(); n != 2 {
				t.Errorf("%d connections, want 2: the broken one must not be kept", n)
			}
		})
	}
}

// TestCanceledSendsNothing checks that a request whose context has ended
// is not sent, and leaves the idle connection it would have taken alone.
func TestCanceledSendsNothing(t *testing.T) {
	var heads atomic.Int32
	addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		for readHead(br) != "" {
			heads.Add(1)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	})
	c := newClient(t)
	get(t, c, "GET", "http://"+addr+"/")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	if _, err := c.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if _, _, reused := get(t, c, "GET", "http://"+addr+"/"); !reused || heads.Load() != 2 {
		t.Errorf("next request reused %v, member saw %d requests; want true, 2", reused, heads.Load())
	}
}

// TestInformationalSkipped checks that 1xx answers before the response are
// passed over, a 101 nobody asked for is an error, and so are endless 1xx.
func TestInformationalSkipped(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		want    int
		wantErr error
	}{
		{"early hints", "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, nil},
		{"unasked switch", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", 0, errUnexpectedSwitch},
		{"endless 1xx", strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", 10), 0, errTooManyInformational},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				readHead(br)
				io.WriteString(c, tt.answer)
				io.Copy(io.Discard, br)
			})
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			resp, err := newClient(t).RoundTrip(req)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

// TestIdleLimitAndClose checks that no more than MaxIdlePerHost
// connections are kept, and that Close closes them and
// every connection that ends after it.
func TestIdleLimitAndClose(t *testing.T) {
	release := make(chan struct{})
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wait" {
			<-release
		}
		io.WriteString(w, "ok")
	})
	c := newClient(t)
	c.MaxIdlePerHost = 2
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { get(t, c, "GET", srv.URL+"/wait") })
	}
	eventually(t, "5 connections opened", func() bool { return srv.opened.Load() == 5 })
	close(release)
	wg.Wait()
	eventually(t, "3 of 5 connections closed", func() bool { return srv.closed.Load() == 3 })

	slow := make(chan struct{})
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("a"))
		w.(http.Flusher).Flush()
		<-slow
	})
	req, _ := http.NewRequest("GET", srv.URL, nil)
	resp, err := c.RoundTrip(req) // takes one of the two idle ones
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	eventually(t, "the idle connection closed", func() bool { return srv.closed.Load() == 4 })
	close(slow)
	io.ReadAll(resp.Body)
	resp.Body.Close()
	eventually(t, "the connection in use closed at its end", func() bool { return srv.closed.Load() == 5 })
}

// TestSweep checks that the sweeper closes connections idle for too long
// and connections the member closed, and forgets members without idle
// connections.
func TestSweep(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	c := newClient(t)
	get(t, c, "GET", srv.URL)
	c.sweepOnce()
	if srv.closed.Load() != 0 {
		t.Fatal("a fresh idle connection was closed")
	}
	srv.CloseClientConnections()
	eventually(t, "the member closed it", func() bool { return srv.closed.Load() == 1 })
	c.sweepOnce()
	if n := hostCount(c); n != 0 {
		t.Errorf("%d members remembered after their only connection closed, want 0", n)
	}
	_, _, reused := get(t, c, "GET", srv.URL)
	if reused {
		t.Error("a connection the member closed was used again")
	}

	c.IdleTimeout = 10 * time.Millisecond
	time.Sleep(20 * time.Millisecond)
	c.sweepOnce()
	eventually(t, "the expired connection closed", func() bool { return srv.closed.Load() == 2 })
	_, _, reused = get(t, c, "GET", srv.URL)
	if reused {
		t.Error("an expired connection was used again")
	}
}

func hostCount(c *Client) int {
	n := 0
	c.hosts.Range(func(_, _ any) bool { n++; return true })
	return n
}

// TestConcurrent sends requests from many goroutines over a member that
// sometimes closes its connections, under the race detector in make test.
func TestConcurrent(t *testing.T) {
	var n atomic.Int32
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%17 == 0 {
			w.Header().Set("Connection", "close")
		}
		fmt.Fprintf(w, "%s", r.URL.Path)
	})
	c := newClient(t)
	c.MaxIdlePerHost = 4
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				path := fmt.Sprintf("/%d/%d", g, i)
				if _, body, _ := get(t, c, "GET", srv.URL+path); body != path {
					t.Errorf("GET %s answered %q", path, body)
				}
				if i%25 == 0 {
					c.sweepOnce()
				}
			}
		})
	}
	wg.Wait()
}

// rawServer accepts connections on loopback and runs serve on each, closing
// it after.
func rawServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				serve(c, bufio.NewReader(c))
			})
		}
	})
	return l.Addr().String()
}

// TestRequestLineAsTransport checks that the Client writes the request
// line net/http's Transport writes for the same URL, for the forms ramjetd
// forwards: an escaped path with its RawPath, a path sent verbatim through
// Opaque (raw bytes a URI should carry encoded), a rewritten RawPath, and
// raw bytes in the query.
func TestRequestLineAsTransport(t *testing.T) {
	urls := []struct {
		name string
		url  url.URL
	}{
		{"plain", url.URL{Path: "/a/b", RawQuery: "x=1"}},
		{"RawPath kept", url.URL{Path: "/a/b c", RawPath: "/a%2Fb%20c"}},
		{"raw bytes in Opaque", url.URL{Path: "/a\"b{c}|\xc3\xa9", Opaque: "/a\"b{c}|\xc3\xa9", RawQuery: "q"}},
		{"RawPath with nginx's escapes", url.URL{Path: "/a\"b!'()*[]", RawPath: "/a%22b!'()*[]"}},
		{"raw bytes in the query", url.URL{Path: "/q", RawQuery: "x=\"y\"&z={1}"}},
		{"no path", url.URL{}},
	}
	for _, tt := range urls {
		t.Run(tt.name, func(t *testing.T) {
			lines := make(chan string, 2)
			addr := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				line, _, _ := strings.Cut(readHead(br), "\r\n")
				lines <- line
				io.WriteString(c, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
			})
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			var written []string // by the Client, then by the Transport
			for _, rt := range []http.RoundTripper{newClient(t), tr} {
				u := tt.url
				u.Scheme, u.Host = "http", addr
				req := &http.Request{Method: "GET", URL: &u, Header: http.Header{}, Host: "example.test"}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				written = append(written, <-lines)
			}
			if written[0] != written[1] {
				t.Errorf("request line %q, net/http's Transport writes %q", written[0], written[1])
			}
		})
	}
}

// readHead reads a request head and returns it.
func readHead(br *bufio.Reader) string {
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		b.WriteString(line)
		if err != nil || line == "\r\n" {
			return b.String()
		}
	}
}

// TestRequestEndsWithWait checks the write that waits for the answer
// (tcpconn.Conn.WriteThenWait): only the flush that ends a request waits,
// so a head larger than the write buffer, flushed in parts, is answered,
// and plain TCP connections are the ones that wait.
func TestRequestEndsWithWait(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strconv.Itoa(len(r.Header.Get("X-Large"))))
	})
	c := newClient(t)
	for _, size := range []int{10, 3 << 10, 20 << 10} {
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		req.Header.Set("X-Large", strings.Repeat("v", size))
		start := time.Now()
		resp, err := c.RoundTrip(req)
		if err != nil {
			t.Fatalf("a %d-byte field: %v", size, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != strconv.Itoa(size) {
			t.Errorf("a %d-byte field: the member saw %s bytes", size, b)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a %d-byte field took %v: a flush before the end waited", size, d)
		}
	}
	h, _ := c.hosts.Load(strings.TrimPrefix(srv.URL, "http://"))
	select {
	case cn := <-h.(*host).idle:
		if cn.sink.waiter == nil {
			t.Errorf("a plain TCP connection (%T) does not wait for the answer with its write", cn.Conn)
		}
		cn.Close()
	default:
		t.Fatal("no idle connection after the requests")
	}
}

// recordingWaiter records the writes that would wait for the answer.
type recordingWaiter struct{ writes []int }

func (w *recordingWaiter) WriteThenWait(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	return len(p), nil
}

// TestOnlyWholeRequestsWait checks which writes wait for the answer: the
// one that sends a whole request, never the last piece of a head too large
// for the buffer, whose member may have answered its first piece.
func TestOnlyWholeRequestsWait(t *testing.T) {
	waiter := &recordingWaiter{}
	cn := &conn{sink: requestSink{conn: discardConn{}, waiter: waiter}}
	cn.bw = bufio.NewWriterSize(&cn.sink, 4<<10)
	// One connection's requests in turn: the count of pieces starts
	// again for each.
	for i, tc := range []struct {
		field     int
		wantWaits int
	}{{10 << 10, 0}, {100, 1}, {10 << 10, 0}, {100, 1}} {
		req, _ := http.NewRequest("GET", "http://member.test/", nil)
		req.Header.Set("X-Field", strings.Repeat("v", tc.field))
		waiter.writes = nil
		if err := writeRequest(cn.bw, req); err != nil {
			t.Fatal(err)
		}
		if err := cn.flushRequest(); err != nil {
			t.Fatal(err)
		}
		if len(waiter.writes) != tc.wantWaits {
			t.Errorf("request %d, a %d-byte field: writes that wait %v, want %d", i, tc.field, waiter.writes, tc.wantWaits)
		}
	}
}

// discardConn is a net.Conn whose writes succeed and go nowhere.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }
