package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

var quietLog = slog.New(slog.DiscardHandler)

// seen is what an echo member received.
type seen struct {
	Method        string
	URI           string
	Host          string
	Proto         string
	Header        http.Header
	Body          string
	ContentLength int64
}

// startMember serves h on loopback and returns its address.
func startMember(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = nil
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// echoMember answers 200 with a JSON description of the request.
func echoMember(t *testing.T, hits *atomic.Int32) string {
	return startMember(t, func(w http.ResponseWriter, r *http.Request) {
		if hits != nil {
			hits.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(seen{Method: r.Method, URI: r.RequestURI, Host: r.Host, Proto: r.Proto,
			Header: r.Header, Body: string(body), ContentLength: r.ContentLength})
	})
}

// statusMember answers code with the body "member <code>: <request body>".
func statusMember(t *testing.T, code int, hits *atomic.Int32) string {
	return startMember(t, func(w http.ResponseWriter, r *http.Request) {
		if hits != nil {
			hits.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(code)
		io.WriteString(w, http.StatusText(code)+": "+string(body))
	})
}

// slowMember answers only when the request is abandoned, or after 5s.
func slowMember(t *testing.T, hits *atomic.Int32, entered chan<- struct{}) string {
	return startMember(t, func(w http.ResponseWriter, r *http.Request) {
		if hits != nil {
			hits.Add(1)
		}
		if entered != nil {
			entered <- struct{}{}
		}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
}

// rawMember reads each request head and hands the connection to behave,
// which may write anything; the connection is closed when behave returns.
func rawMember(t *testing.T, hits *atomic.Int32, behave func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				if hits != nil {
					hits.Add(1)
				}
				behave(c)
			}()
		}
	}()
	return l.Addr().String()
}

// resetMember closes the connection after the request head, answering
// nothing.
func resetMember(t *testing.T, hits *atomic.Int32) string {
	return rawMember(t, hits, func(net.Conn) {})
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func handlerFor(p *upstream.Pool) *Handler {
	return New([]Target{{Pool: p, Weight: 1}}, Route{}, Options{Log: quietLog})
}

func serve(h *Handler, x *exchange.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.Serve(w, x)
	return w
}

func decodeSeen(t *testing.T, w *httptest.ResponseRecorder) seen {
	t.Helper()
	var s seen
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
		t.Fatalf("member's answer %q (status %d) is not an echo: %v", w.Body.String(), w.Code, err)
	}
	return s
}

func TestHandlerForwards(t *testing.T) {
	addr := echoMember(t, nil)
	h := handlerFor(buildPool(t, config.Pool{}, addr))
	tests := []struct {
		name        string
		method      string
		target      string
		body        io.Reader
		length      int64 // when body is set; -1 for unknown
		header      http.Header
		forwardPath string
		forwardHost string
		want        seen // Header: only the listed ones are checked; nil value means absent
	}{
		{name: "GET", method: "GET", target: "http://example.com/a/b?x=1&y=%20",
			header: http.Header{"Connection": {"X-Hop"}, "X-Hop": {"1"}, "Accept": {"*/*"}},
			want: seen{Method: "GET", URI: "/a/b?x=1&y=%20", Host: "example.com", Proto: "HTTP/1.1",
				Header: http.Header{"Accept": {"*/*"}, "X-Hop": nil, "User-Agent": nil, "X-Forwarded-For": {"192.0.2.10"},
					"X-Forwarded-Host": {"example.com"}, "X-Forwarded-Proto": {"http"}, "X-Forwarded-Port": {"80"}, "X-Real-Ip": {"192.0.2.10"}}}},
		{name: "escaped path as sent", method: "GET", target: "http://example.com/a%2Fb/%7E?q",
			want: seen{Method: "GET", URI: "/a%2Fb/%7E?q", Host: "example.com", Proto: "HTTP/1.1"}},
		{name: "rewritten path and host", method: "GET", target: "http://example.com/old/path?keep=1",
			forwardPath: "/new", forwardHost: "internal.svc",
			want: seen{Method: "GET", URI: "/new?keep=1", Host: "internal.svc", Proto: "HTTP/1.1",
				Header: http.Header{"X-Forwarded-Host": {"example.com"}}}},
		{name: "User-Agent and request id kept", method: "GET", target: "http://example.com/",
			header: http.Header{"User-Agent": {"curl/8"}, "X-Request-Id": {"my-id"}},
			want: seen{Method: "GET", URI: "/", Host: "example.com", Proto: "HTTP/1.1",
				Header: http.Header{"User-Agent": {"curl/8"}, "X-Request-Id": {"my-id"}}}},
		{name: "small body", method: "POST", target: "http://example.com/", body: strings.NewReader("hello"), length: 5,
			want: seen{Method: "POST", URI: "/", Host: "example.com", Proto: "HTTP/1.1", Body: "hello", ContentLength: 5}},
		{name: "streamed body", method: "PUT", target: "http://example.com/", body: io.MultiReader(strings.NewReader("hel"), strings.NewReader("lo")), length: -1,
			want: seen{Method: "PUT", URI: "/", Host: "example.com", Proto: "HTTP/1.1", Body: "hello", ContentLength: -1}},
		{name: "large body", method: "POST", target: "http://example.com/", body: strings.NewReader(strings.Repeat("z", ReplayBodyLimit+10)), length: ReplayBodyLimit + 10,
			want: seen{Method: "POST", URI: "/", Host: "example.com", Proto: "HTTP/1.1", Body: strings.Repeat("z", ReplayBodyLimit+10), ContentLength: ReplayBodyLimit + 10}},
		{name: "empty POST", method: "POST", target: "http://example.com/",
			want: seen{Method: "POST", URI: "/", Host: "example.com", Proto: "HTTP/1.1", ContentLength: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, tt.body)
			if tt.body != nil {
				r.ContentLength = tt.length
			}
			for k, v := range tt.header {
				r.Header[k] = v
			}
			x := exchangeFor(r)
			x.ForwardPath, x.ForwardHost = tt.forwardPath, tt.forwardHost
			w := serve(h, x)
			if w.Code != 200 {
				t.Fatalf("status = %d (%q), want 200", w.Code, w.Body.String())
			}
			got := decodeSeen(t, w)
			if got.Method != tt.want.Method || got.URI != tt.want.URI || got.Host != tt.want.Host || got.Proto != tt.want.Proto ||
				got.Body != tt.want.Body || got.ContentLength != tt.want.ContentLength {
				t.Errorf("member saw %s %s (host %s, %s, %d-byte body, length %d), want %s %s (host %s, %s, %d-byte body, length %d)",
					got.Method, got.URI, got.Host, got.Proto, len(got.Body), got.ContentLength,
					tt.want.Method, tt.want.URI, tt.want.Host, tt.want.Proto, len(tt.want.Body), tt.want.ContentLength)
			}
			for k, v := range tt.want.Header {
				if gv, ok := got.Header[k]; (v == nil) == ok || (v != nil && strings.Join(gv, ",") != strings.Join(v, ",")) {
					t.Errorf("member's %s = %q (present %v), want %q", k, gv, ok, v)
				}
			}
			if id := got.Header.Get("X-Request-Id"); id == "" {
				t.Errorf("member got no X-Request-Id")
			}
		})
	}
}

func TestHandlerResponse(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		member      http.HandlerFunc
		wantStatus  int
		wantBody    string
		wantHeader  http.Header // nil value means absent
		wantFlushed bool
		wantTrailer http.Header
	}{
		{name: "headers, hop headers dropped", method: "GET", member: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "X-Hop")
			w.Header().Set("X-Hop", "1")
			w.Header().Set("Keep-Alive", "timeout=5")
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			w.WriteHeader(201)
			io.WriteString(w, "created")
		}, wantStatus: 201, wantBody: "created", wantHeader: http.Header{
			"Set-Cookie": {"a=1", "b=2"}, "Content-Length": {"7"}, "Connection": nil, "X-Hop": nil, "Keep-Alive": nil}},
		{name: "HEAD", method: "HEAD", member: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "42")
		}, wantStatus: 200, wantBody: "", wantHeader: http.Header{"Content-Length": {"42"}}},
		{name: "known length not flushed", method: "GET", member: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}, wantStatus: 200, wantBody: "hello", wantFlushed: false},
		{name: "unknown length flushed", method: "GET", member: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hel")
			w.(http.Flusher).Flush()
			io.WriteString(w, "lo")
		}, wantStatus: 200, wantBody: "hello", wantFlushed: true},
		{name: "event stream flushed", method: "GET", member: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Length", "12")
			io.WriteString(w, "data: hi\n\n\n\n")
		}, wantStatus: 200, wantBody: "data: hi\n\n\n\n", wantFlushed: true},
		{name: "trailers", method: "GET", member: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Sum")
			io.WriteString(w, "data")
			w.(http.Flusher).Flush()
			w.Header().Set("X-Sum", "abc")
			w.Header().Set(http.TrailerPrefix+"X-Late", "1")
		}, wantStatus: 200, wantBody: "data", wantFlushed: true, wantTrailer: http.Header{"X-Sum": {"abc"}, "X-Late": {"1"}}},
		{name: "500 passed on", method: "GET", member: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "oops", 500)
		}, wantStatus: 500, wantBody: "oops\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := handlerFor(buildPool(t, config.Pool{}, startMember(t, tt.member)))
			w := serve(h, exchangeFor(httptest.NewRequest(tt.method, "http://example.com/", nil)))
			res := w.Result()
			if res.StatusCode != tt.wantStatus || w.Body.String() != tt.wantBody {
				t.Errorf("answer = %d %q, want %d %q", res.StatusCode, w.Body.String(), tt.wantStatus, tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if gv, ok := res.Header[k]; (v == nil) == ok || (v != nil && strings.Join(gv, ",") != strings.Join(v, ",")) {
					t.Errorf("%s = %q (present %v), want %q", k, gv, ok, v)
				}
			}
			if w.Flushed != tt.wantFlushed {
				t.Errorf("flushed = %v, want %v", w.Flushed, tt.wantFlushed)
			}
			for k, v := range tt.wantTrailer {
				if got := res.Trailer.Get(k); got != v[0] {
					t.Errorf("trailer %s = %q, want %q (trailers %v)", k, got, v[0], res.Trailer)
				}
			}
		})
	}
}

func TestHandlerNoMembers(t *testing.T) {
	h := handlerFor(buildPool(t, config.Pool{}))
	w := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil)))
	if want := "Service Unavailable: " + errNoMembers.Error() + "\n"; w.Code != 503 || w.Body.String() != want {
		t.Errorf("answer = %d %q, want 503 %q", w.Code, w.Body.String(), want)
	}
}

func h2cMember(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func TestHandlerGRPC(t *testing.T) {
	var hits atomic.Int32
	grpc := func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.Write(body)
		w.Header().Set("Grpc-Status", "0")
		w.Header().Set("X-Proto", r.Proto) // ignored: after the head
	}
	tests := []struct {
		name        string
		scheme      config.Scheme
		addr        func() string
		wantStatus  int
		wantHits    int32
		wantGRPC    string // grpc-status in the headers (error) or trailers (success)
		wantTrailer bool
	}{
		{name: "to an HTTP/1.1 pool", scheme: config.SchemeHTTP, addr: func() string { return startMember(t, grpc) },
			wantStatus: 502, wantHits: 0, wantGRPC: "14"},
		{name: "to an h2c pool", scheme: config.SchemeH2C, addr: func() string { return h2cMember(t, grpc) },
			wantStatus: 200, wantHits: 1, wantGRPC: "0", wantTrailer: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			h := handlerFor(buildPool(t, config.Pool{Scheme: tt.scheme}, tt.addr()))
			r := httptest.NewRequest("POST", "http://example.com/pkg.Svc/Call", strings.NewReader("\x00\x00\x00\x00\x01x"))
			r.Header.Set("Content-Type", "application/grpc+proto")
			r.Header.Set("Te", "trailers")
			w := serve(h, exchangeFor(r))
			res := w.Result()
			if res.StatusCode != tt.wantStatus {
				t.Errorf("status = %d (%q), want %d", res.StatusCode, w.Body.String(), tt.wantStatus)
			}
			if got := hits.Load(); got != tt.wantHits {
				t.Errorf("member called %d times, want %d", got, tt.wantHits)
			}
			got := res.Header.Get("Grpc-Status")
			if tt.wantTrailer {
				got = res.Trailer.Get("Grpc-Status")
			}
			if got != tt.wantGRPC {
				t.Errorf("grpc-status = %q, want %q (headers %v, trailers %v)", got, tt.wantGRPC, res.Header, res.Trailer)
			}
		})
	}
}

// member kinds for the retry tables.
type memberKind int

const (
	refuses memberKind = iota // nothing listens
	ok                        // 200 with "OK: <body>"
	answers503
	answers500
	resets // closes the connection after the request head
	slow   // answers after the response timeout
)

func (k memberKind) String() string {
	return [...]string{"refuses", "ok", "503", "500", "resets", "slow"}[k]
}

func startKind(t *testing.T, k memberKind, hits *atomic.Int32) string {
	switch k {
	case refuses:
		return closedAddr(t)
	case ok:
		return statusMember(t, 200, hits)
	case answers503:
		return statusMember(t, 503, hits)
	case answers500:
		return statusMember(t, 500, hits)
	case resets:
		return resetMember(t, hits)
	case slow:
		return slowMember(t, hits, nil)
	}
	panic("unknown member kind")
}

// retryPool starts members of the given kinds, in the order round robin
// tries them, and returns the pool and each member's hit counter.
func retryPool(t *testing.T, retries *int, kinds ...memberKind) (*upstream.Pool, []*atomic.Int32) {
	t.Helper()
	hits := make([]*atomic.Int32, len(kinds))
	addrs := make([]string, len(kinds))
	for i, k := range kinds {
		hits[i] = new(atomic.Int32)
		addrs[i] = startKind(t, k, hits[i])
	}
	p := buildPool(t, config.Pool{Retries: retries, ResponseTimeout: config.Duration(150 * time.Millisecond)}, addrs...)
	return p, hits
}

func intp(n int) *int { return &n }

func TestHandlerRetries(t *testing.T) {
	tests := []struct {
		name       string
		members    []memberKind
		retries    *int
		method     string
		body       string
		wantStatus int
		wantBody   string
		wantHits   []int32
	}{
		{name: "connect failed, GET retried", members: []memberKind{refuses, ok}, method: "GET",
			wantStatus: 200, wantBody: "OK: ", wantHits: []int32{0, 1}},
		{name: "connect failed, POST retried", members: []memberKind{refuses, ok}, method: "POST", body: "data",
			wantStatus: 200, wantBody: "OK: data", wantHits: []int32{0, 1}},
		{name: "503, GET retried", members: []memberKind{answers503, ok}, method: "GET",
			wantStatus: 200, wantBody: "OK: ", wantHits: []int32{1, 1}},
		{name: "503, PUT retried with its kept body", members: []memberKind{answers503, ok}, method: "PUT", body: "data",
			wantStatus: 200, wantBody: "OK: data", wantHits: []int32{1, 1}},
		{name: "503, POST passed on", members: []memberKind{answers503, ok}, method: "POST", body: "data",
			wantStatus: 503, wantBody: "Service Unavailable: data", wantHits: []int32{1, 0}},
		{name: "500 passed on", members: []memberKind{answers500, ok}, method: "GET",
			wantStatus: 500, wantBody: "Internal Server Error: ", wantHits: []int32{1, 0}},
		{name: "every member 503, last answer passed on", members: []memberKind{answers503, answers503}, method: "GET",
			wantStatus: 503, wantBody: "Service Unavailable: ", wantHits: []int32{1, 1}},
		{name: "retries 0", members: []memberKind{answers503, ok}, retries: intp(0), method: "GET",
			wantStatus: 503, wantBody: "Service Unavailable: ", wantHits: []int32{1, 0}},
		{name: "retries bound the tries", members: []memberKind{refuses, refuses, ok}, retries: intp(1), method: "GET",
			wantStatus: 502, wantBody: "Bad Gateway: " + sentenceUnreachable + "\n", wantHits: []int32{0, 0, 0}},
		{name: "broken connection, GET retried", members: []memberKind{resets, ok}, method: "GET",
			wantStatus: 200, wantBody: "OK: ", wantHits: []int32{1, 1}},
		{name: "broken connection, POST not retried", members: []memberKind{resets, ok}, method: "POST",
			wantStatus: 502, wantBody: "Bad Gateway: " + sentenceBroken + "\n", wantHits: []int32{1, 0}},
		{name: "response timeout, GET retried", members: []memberKind{slow, ok}, method: "GET",
			wantStatus: 200, wantBody: "OK: ", wantHits: []int32{1, 1}},
		{name: "response timeout, POST not retried", members: []memberKind{slow, ok}, method: "POST",
			wantStatus: 504, wantBody: "Gateway Timeout: " + sentenceNoAnswer + "\n", wantHits: []int32{1, 0}},
		{name: "only member refuses", members: []memberKind{refuses}, method: "GET",
			wantStatus: 502, wantBody: "Bad Gateway: " + sentenceUnreachable + "\n", wantHits: []int32{0}},
		{name: "every member refuses, HEAD", members: []memberKind{refuses, refuses}, method: "HEAD",
			wantStatus: 502, wantBody: "", wantHits: []int32{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, hits := retryPool(t, tt.retries, tt.members...)
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			w := serve(handlerFor(p), exchangeFor(httptest.NewRequest(tt.method, "http://example.com/", body)))
			if w.Code != tt.wantStatus || w.Body.String() != tt.wantBody {
				t.Errorf("answer = %d %q, want %d %q", w.Code, w.Body.String(), tt.wantStatus, tt.wantBody)
			}
			for i, want := range tt.wantHits {
				if got := hits[i].Load(); got != want {
					t.Errorf("member %d (%s) received %d requests, want %d", i, tt.members[i], got, want)
				}
			}
		})
	}
}

// TestHandlerCounters checks the counters the metrics and the admin API
// show: retries_total is "tries after the first" and failures_total counts
// "connect errors, timeouts, broken connections, 502/503/504 answers"
// (docs/ramjetd.md).
func TestHandlerCounters(t *testing.T) {
	tests := []struct {
		name         string
		members      []memberKind
		method       string
		wantRetries  uint64
		wantRequests []uint64
		wantFailures []uint64
	}{
		{name: "success", members: []memberKind{ok}, method: "GET",
			wantRetries: 0, wantRequests: []uint64{1}, wantFailures: []uint64{0}},
		{name: "500 is not a failure", members: []memberKind{answers500}, method: "GET",
			wantRetries: 0, wantRequests: []uint64{1}, wantFailures: []uint64{0}},
		{name: "refused then ok", members: []memberKind{refuses, ok}, method: "GET",
			wantRetries: 1, wantRequests: []uint64{1, 1}, wantFailures: []uint64{1, 0}},
		{name: "503 then ok", members: []memberKind{answers503, ok}, method: "GET",
			wantRetries: 1, wantRequests: []uint64{1, 1}, wantFailures: []uint64{1, 0}},
		{name: "broken, POST not retried", members: []memberKind{resets, ok}, method: "POST",
			wantRetries: 0, wantRequests: []uint64{1, 0}, wantFailures: []uint64{1, 0}},
		{name: "only member refuses: no second try", members: []memberKind{refuses}, method: "GET",
			wantRetries: 0, wantRequests: []uint64{1}, wantFailures: []uint64{1}},
		{name: "both members refuse: one retry", members: []memberKind{refuses, refuses}, method: "GET",
			wantRetries: 1, wantRequests: []uint64{1, 1}, wantFailures: []uint64{1, 1}},
		{name: "503 passed on to a POST is a failed try", members: []memberKind{answers503, ok}, method: "POST",
			wantRetries: 0, wantRequests: []uint64{1, 0}, wantFailures: []uint64{1, 0}},
		{name: "last 503 passed on is a failed try", members: []memberKind{answers503, answers503}, method: "GET",
			wantRetries: 1, wantRequests: []uint64{1, 1}, wantFailures: []uint64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := retryPool(t, nil, tt.members...)
			serve(handlerFor(p), exchangeFor(httptest.NewRequest(tt.method, "http://example.com/", nil)))
			if got := p.Stats.Retries.Load(); got != tt.wantRetries {
				t.Errorf("pool retries = %d, want %d", got, tt.wantRetries)
			}
			set := p.Members()
			for i := range set.Len() {
				st := set.Member(i).Stats
				if got := st.Requests.Load(); got != tt.wantRequests[i] {
					t.Errorf("member %d (%s): requests = %d, want %d", i, tt.members[i], got, tt.wantRequests[i])
				}
				if got := st.Failures.Load(); got != tt.wantFailures[i] {
					t.Errorf("member %d (%s): failures = %d, want %d", i, tt.members[i], got, tt.wantFailures[i])
				}
				if got := st.InFlight.Load(); got != 0 {
					t.Errorf("member %d (%s): in flight = %d after the request, want 0", i, tt.members[i], got)
				}
			}
		})
	}
}

// TestHandlerTruncatedResponse checks that a body cut short by the member
// aborts the client's connection instead of ending the response as if it
// were complete.
func TestHandlerTruncatedResponse(t *testing.T) {
	addr := rawMember(t, nil, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
	})
	p := buildPool(t, config.Pool{}, addr)
	w := httptest.NewRecorder()
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		handlerFor(p).Serve(w, exchangeFor(httptest.NewRequest("GET", "/", nil)))
	}()
	if recovered != http.ErrAbortHandler {
		t.Errorf("Serve ended with %v, want panic(http.ErrAbortHandler)", recovered)
	}
	if w.Code != 200 || w.Body.String() != "short" {
		t.Errorf("client got %d %q before the abort, want 200 \"short\"", w.Code, w.Body.String())
	}
	st := p.Members().Member(0).Stats
	if st.Failures.Load() != 1 || st.InFlight.Load() != 0 {
		t.Errorf("member failures = %d, in flight = %d; want 1, 0", st.Failures.Load(), st.InFlight.Load())
	}
}

func TestHandlerClientGone(t *testing.T) {
	entered := make(chan struct{}, 1)
	var hits atomic.Int32
	p := buildPool(t, config.Pool{}, slowMember(t, &hits, entered), statusMember(t, 200, &hits))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
	go func() {
		<-entered
		cancel()
	}()
	w := &statusKeeper{ResponseRecorder: httptest.NewRecorder()}
	handlerFor(p).Serve(w, exchangeFor(r))
	if w.recorded != statusClientClosed {
		t.Errorf("recorded status = %d, want %d", w.recorded, statusClientClosed)
	}
	if w.Body.Len() != 0 || len(w.Header()) != 0 {
		t.Errorf("wrote %v %q to a client that is gone, want nothing", w.Header(), w.Body.String())
	}
	if got := hits.Load(); got != 1 {
		t.Errorf("members called %d times, want 1: a request the client abandoned is not retried", got)
	}
	st := p.Members().Member(0).Stats
	if st.Failures.Load() != 0 || st.InFlight.Load() != 0 {
		t.Errorf("member failures = %d, in flight = %d; want 0, 0 (the client left, the member did not fail)", st.Failures.Load(), st.InFlight.Load())
	}
}

func TestHandlerBodyErrors(t *testing.T) {
	tests := []struct {
		name       string
		body       io.Reader
		length     int64
		limit      int64 // MaxBytesReader limit, 0 for none
		wantStatus int
		wantBody   string
	}{
		{name: "declared small body over the limit", body: strings.NewReader("0123456789"), length: 10, limit: 4,
			wantStatus: 413, wantBody: "Request Entity Too Large: " + errBodyTooLarge.Error() + "\n"},
		{name: "streamed body over the limit", body: strings.NewReader(strings.Repeat("x", 100)), length: -1, limit: 10,
			wantStatus: 413, wantBody: "Request Entity Too Large: " + errBodyTooLarge.Error() + "\n"},
		{name: "small body shorter than declared", body: strings.NewReader("abc"), length: 10,
			wantStatus: 400, wantBody: "Bad Request: " + errClientBody.Error() + "\n"},
		{name: "streamed body broken", body: io.MultiReader(strings.NewReader("abc"), &scriptedReader{steps: []step{{err: io.ErrUnexpectedEOF}}}), length: -1,
			wantStatus: 400, wantBody: "Bad Request: " + errClientBody.Error() + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int32
			addr := startMember(t, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				io.ReadAll(r.Body)
				w.WriteHeader(200)
			})
			r := httptest.NewRequest("PUT", "/", tt.body)
			r.ContentLength = tt.length
			w := httptest.NewRecorder()
			if tt.limit > 0 {
				r.Body = http.MaxBytesReader(w, r.Body, tt.limit)
			}
			handlerFor(buildPool(t, config.Pool{}, addr, closedAddr(t))).Serve(w, exchangeFor(r))
			if w.Code != tt.wantStatus || w.Body.String() != tt.wantBody {
				t.Errorf("answer = %d %q, want %d %q", w.Code, w.Body.String(), tt.wantStatus, tt.wantBody)
			}
			if got := hits.Load(); got > 1 {
				t.Errorf("member received the request %d times, want at most once", got)
			}
		})
	}
}

type countingObserver struct{ n atomic.Int32 }

func (o *countingObserver) Observe(float64) { o.n.Add(1) }

func TestHandlerLatency(t *testing.T) {
	p := buildPool(t, config.Pool{}, closedAddr(t), statusMember(t, 200, nil))
	obs := &countingObserver{}
	p.Latency = obs
	h := handlerFor(p)
	serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil))) // refused, then answered
	if got := obs.n.Load(); got != 1 {
		t.Errorf("latency observed %d times for one answered try, want 1", got)
	}
}

func TestHandlerCookieAffinity(t *testing.T) {
	named := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }
	}
	p := buildPool(t, config.Pool{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByCookie,
		Cookie: &config.AffinityCookie{Name: "sticky"}}},
		startMember(t, named("a")), startMember(t, named("b")), startMember(t, named("c")))
	h := handlerFor(p)

	first := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil)))
	cookies := first.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != "sticky" {
		t.Fatalf("first answer set cookies %v, want one called sticky", cookies)
	}
	member := first.Body.String()
	for i := range 20 {
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(cookies[0])
		w := serve(h, exchangeFor(r))
		if w.Body.String() != member {
			t.Fatalf("request %d with the cookie went to %q, want %q", i, w.Body.String(), member)
		}
		if sc := w.Header().Values("Set-Cookie"); len(sc) != 0 {
			t.Fatalf("request %d with the cookie got Set-Cookie %q, want none", i, sc)
		}
	}
}

// TestStreamedBodyRetrySplitsBody sends a PUT with a streamed body to a
// member that answers 503 before reading it. The proxy may try another
// member only if that member then receives the whole body: the transport
// of the first try still reads the shared body in the background, so a
// retry splits the body between the two members.
func TestStreamedBodyRetrySplitsBody(t *testing.T) {
	// The first member answers 503 as soon as it has the head, as servers
	// that refuse early do, and keeps the connection open.
	release := make(chan struct{})
	early := rawMember(t, nil, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
		<-release
	})
	t.Cleanup(func() { close(release) }) // runs before rawMember's cleanup
	entered := make(chan struct{}, 1)
	echo := startMember(t, func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		body, _ := io.ReadAll(r.Body)
		w.Write(body)
	})
	p := buildPool(t, config.Pool{}, early, echo)

	pr, pw := io.Pipe()
	defer pr.CloseWithError(io.ErrClosedPipe) // frees a writer nobody reads for
	r := httptest.NewRequest("PUT", "/", pr)  // ContentLength -1: streamed
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		handlerFor(p).Serve(w, exchangeFor(r))
	}()
	select {
	case <-done:
		// Not retried: the 503 is passed on, which is safe.
		if w.Code != 503 {
			t.Errorf("answer without a retry = %d, want the member's 503", w.Code)
		}
		return
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("neither an answer nor a retry within 5s")
	}
	time.Sleep(20 * time.Millisecond) // let both transports wait on the body
	const want = "first-part|second-part|third-part"
	go func() {
		for _, part := range []string{"first-part|", "second-part|", "third-part"} {
			if _, err := io.WriteString(pw, part); err != nil {
				return
			}
		}
		pw.Close()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no answer within 5s")
	}
	if w.Code == 200 && w.Body.String() != want {
		t.Errorf("the retried member answered 200 having received %q, want the whole body %q: "+
			"the streamed body was retried while the first try's transport was still reading it", w.Body.String(), want)
	}
}

func TestHandlerWeightedPoolsReachMembers(t *testing.T) {
	a := buildPool(t, config.Pool{}, statusMember(t, 200, nil))
	b := buildPool(t, config.Pool{}, statusMember(t, 202, nil))
	h := New([]Target{{Pool: a, Weight: 0}, {Pool: b, Weight: 1}}, Route{}, Options{Log: quietLog})
	for range 5 {
		if w := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil))); w.Code != 202 {
			t.Fatalf("status = %d, want 202 from the only pool with weight", w.Code)
		}
	}
}

// statusKeeper is a ResponseRecorder that also keeps the status recorded
// with exchange.RecordStatus, as ramjetd's own writer does.
type statusKeeper struct {
	*httptest.ResponseRecorder
	recorded int
}

func (w *statusKeeper) RecordStatus(code int) { w.recorded = code }
