package listener

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

const (
	get      = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	postCL   = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
	postTE   = "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6;q=\"x\" \r\n world\r\n0\r\nX-T: 1\r\n \r\n\r\n"
	clWithTE = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	upgrade  = "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n"
)

type trackCase struct {
	name    string
	in      string
	max     int       // head limit; 0 means 4096
	want    []problem // verdicts of requests 0, 1, ...
	reading state     // else: where it stands at the end
}

var trackCases = []trackCase{
	{name: "get twice", in: get + get, want: []problem{none, none, none}},
	{name: "keep-alive", in: get + postCL + postTE + get, want: []problem{none, none, none, none, none}},
	{name: "bare LF lines", in: "GET / HTTP/1.1\nHost: a\n\n" + "GET / HTTP/1.1\r\nHost: a\n\r\n" + get, want: []problem{none, none, none, none}},
	{name: "body split pending", in: postCL[:len(postCL)-2], want: []problem{none}, reading: inBody},
	{name: "cl with te", in: clWithTE, want: []problem{lengthAndChunked, lengthAndChunked}},
	{name: "te with cl", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n", want: []problem{lengthAndChunked}},
	{name: "bad fourth", in: get + postCL + postTE + clWithTE + get, want: []problem{none, none, none, lengthAndChunked, lengthAndChunked}},
	{name: "identical cl twice", in: "POST / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length:  1 \r\n\r\nx" + get, want: []problem{none, none}},
	{name: "differing cl", in: "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", want: []problem{differingContentLength}},
	{name: "cl leading zero", in: "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 01\r\n\r\n", want: []problem{differingContentLength}},
	{name: "cl sign", in: "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", want: []problem{badContentLength}},
	{name: "cl list", in: "POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", want: []problem{badContentLength}},
	{name: "cl empty", in: "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", want: []problem{badContentLength}},
	{name: "cl overflow", in: "POST / HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n\r\n", want: []problem{badContentLength}},
	{name: "cl max", in: "POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n", want: []problem{none, none}, reading: inBody},
	{name: "te chunked identity", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n", want: []problem{notChunked}},
	{name: "te xchunked", in: "POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", want: []problem{notChunked}},
	{name: "te twice", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", want: []problem{notChunked}},
	{name: "te blanks and case", in: "POST / HTTP/1.1\r\ntransfer-encoding:\t CHUNKED \r\n\r\n0\r\n\r\n" + get, want: []problem{none, none, none}},
	{name: "te in http/1.0", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", want: []problem{chunkedHTTP10}},
	{name: "obs-fold", in: "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n", want: []problem{obsFold}},
	{name: "obs-fold blank line", in: "GET / HTTP/1.1\r\nHost: a\r\n\t\r\n\r\n", want: []problem{obsFold}},
	{name: "obs-fold second request", in: get + "GET / HTTP/1.1\r\n Transfer-Encoding: chunked\r\n\r\n", want: []problem{none, obsFold}},
	{name: "crlf after post", in: postCL + "\r\n\r\n" + get, want: []problem{none, none, none}},
	{name: "crlf split after post", in: postCL + "\r\n\n" + get, want: []problem{none, none, none}},
	{name: "five crlf after post", in: postCL + "\r\n\r\n\n" + get, want: []problem{none, lostTrack}},
	{name: "crlf after get", in: get + "\r\n" + get, want: []problem{none, lostTrack}},
	{name: "request line one space", in: "GET /\r\n\r\n", want: []problem{lostTrack}},
	{name: "chunk size not hex", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", want: []problem{none, lostTrack}},
	{name: "chunk size bare LF", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", want: []problem{none, lostTrack}},
	{name: "chunk size blank before ext", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 ;x\r\n", want: []problem{none, lostTrack}},
	{name: "chunk size 17 digits", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000005\r\n", want: []problem{none, lostTrack}},
	{name: "chunk size 16 digits", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000001\r\nx\r\n0\r\n\r\n" + get, want: []problem{none, none, none}},
	{name: "chunk without crlf", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n", want: []problem{none, lostTrack}},
	{name: "trailer ends with bare LF", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\n\n" + get, want: []problem{none, none, none}},
	{name: "trailer too long", max: 64, in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: " + strings.Repeat("a", 64) + "\r\n\r\n", want: []problem{none, lostTrack}},
	{name: "head too long", max: 64, in: "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 64) + "\r\n\r\n", want: []problem{lostTrack}},
	{name: "options star not counted", in: "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n" + get + clWithTE, want: []problem{none, lengthAndChunked}},
	{name: "options star bad", in: get + "OPTIONS * HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n" + get, want: []problem{none, lengthAndChunked}},
	{name: "options path counted", in: "OPTIONS /x HTTP/1.1\r\nHost: a\r\n\r\n" + get + clWithTE, want: []problem{none, none, lengthAndChunked}},
	{name: "chunk size trailing blanks", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nA;x=y \t\r\n0123456789\r\n0;last\r\n\r\n" + get, want: []problem{none, none, none}},
	{name: "te empty", in: "POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", want: []problem{notChunked}},
	{name: "upgrade", in: upgrade + clWithTE, want: []problem{none, lostTrack, lostTrack}},
	{name: "upgrade bad itself", in: "GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", want: []problem{lengthAndChunked}},
	{name: "upgrade without connection", in: "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n" + clWithTE, want: []problem{none, lengthAndChunked}},
	{name: "upgrade empty", in: "GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: \r\n\r\n" + clWithTE, want: []problem{none, lengthAndChunked}},
	{name: "connect", in: "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n\x16\x03\x01", want: []problem{none, lostTrack}},
}

// trackerState is what a tracker knows, comparable with ==.
type trackerState struct {
	stop    uint64
	state   state
	size    int
	partial string
	remain  uint64
	crlf    int
	skip    int
	next    uint64
	h       head
}

func (t *tracker) snapshot() trackerState {
	if t.state == off { // what it had read no longer matters
		return trackerState{stop: t.stop.Load(), state: off, next: t.next}
	}
	return trackerState{t.stop.Load(), t.state, t.size, string(t.partial), t.remain, t.crlf, t.skip, t.next, t.h}
}

func newTracker(max int) *tracker {
	if max == 0 {
		max = 4096
	}
	return &tracker{max: max}
}

func TestTracker(t *testing.T) {
	for _, tc := range trackCases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker(tc.max)
			tr.feed([]byte(tc.in))
			for i, p := range tc.want {
				if got, want := tr.verdict(uint64(i)), problemErrs[p]; got != want {
					t.Errorf("verdict of request %d: got %v, want %v", i, got, want)
				}
			}
			if tr.stop.Load() == 0 && tr.state != tc.reading {
				t.Errorf("state at the end: got %d, want %d", tr.state, tc.reading)
			}
		})
	}
}

func TestVerdictErrors(t *testing.T) {
	for p, err := range problemErrs[1:] {
		if !errors.Is(err, ErrAmbiguousFraming) {
			t.Errorf("problem %d: got %v, want an error wrapping ErrAmbiguousFraming", p+1, err)
		}
	}
	if got, want := problemErrs[lengthAndChunked].Error(), "ambiguous request framing: Content-Length together with Transfer-Encoding"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var g *Guard
	if err := g.Verdict(); err != nil {
		t.Errorf("verdict of a nil guard: got %v, want nil", err)
	}
}

// TestSplits checks that where reads split the stream does not change what
// the tracker concludes: every split in two, and one byte per read.
func TestSplits(t *testing.T) {
	for _, tc := range trackCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			whole := newTracker(tc.max)
			whole.feed(in)
			want := whole.snapshot()
			for i := range in {
				tr := newTracker(tc.max)
				tr.feed(in[:i])
				tr.feed(in[i:])
				if got := tr.snapshot(); got != want {
					t.Fatalf("split at %d: got %+v, want %+v", i, got, want)
				}
			}
			tr := newTracker(tc.max)
			for i := range in {
				tr.feed(in[i : i+1])
			}
			if got := tr.snapshot(); got != want {
				t.Fatalf("one byte per read: got %+v, want %+v", got, want)
			}
		})
	}
}

// scriptConn is a net.Conn whose reads return the given pieces in turn.
type scriptConn struct {
	net.Conn
	reads [][]byte
}

func (c *scriptConn) Read(p []byte) (int, error) {
	for len(c.reads) > 0 && len(c.reads[0]) == 0 {
		c.reads = c.reads[1:]
	}
	if len(c.reads) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.reads[0])
	c.reads[0] = c.reads[0][n:]
	return n, nil
}

// splitBy cuts data into pieces whose sizes come from cuts.
func splitBy(data, cuts []byte) [][]byte {
	var pieces [][]byte
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(cuts) > 0 {
			n = min(n, int(cuts[i%len(cuts)])+1)
		}
		pieces = append(pieces, data[:n])
		data = data[n:]
	}
	return pieces
}

func FuzzGuard(f *testing.F) {
	for _, tc := range trackCases {
		f.Add([]byte(tc.in), []byte{1, 7, 0, 30})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		whole := newTracker(len(data) + 1)
		whole.feed(data)
		g := NewGuard(&scriptConn{reads: splitBy(data, cuts)}, Limits{MaxHeadBytes: len(data) + 1})
		if _, err := io.Copy(io.Discard, g); err != nil {
			t.Fatal(err)
		}
		if got, want := g.t.snapshot(), whole.snapshot(); got != want {
			t.Fatalf("split by %v: got %+v, want %+v", cuts, got, want)
		}
		checkAgainstNetHTTP(t, data)
	})
}

// checkAgainstNetHTTP reads data with net/http's request parser as its
// server does, through a Guard that the loop asks for verdicts like a
// handler. Wherever net/http ends a request that the guard let through,
// the guard must agree that the next request starts there.
func checkAgainstNetHTTP(t *testing.T, data []byte) {
	src := &countingReader{r: bytes.NewReader(data)}
	g := NewGuard(&readerConn{r: src}, Limits{MaxHeadBytes: len(data) + 1})
	br := bufio.NewReader(g)
	read := newTracker(len(data) + 1) // fed what net/http consumed
	fed := 0
	post := false
	for i := 0; ; i++ {
		if post {
			peek, _ := br.Peek(4)
			br.Discard(len(peek) - len(bytes.TrimLeft(peek, "\r\n")))
		}
		req, err := http.ReadRequest(br)
		if err != nil || req.ProtoMajor != 1 {
			return
		}
		if req.Method == "OPTIONS" && req.RequestURI == "*" {
			// net/http answers it without asking the handler
		} else if err := g.Verdict(); err != nil {
			if !acceptedByNetHTTP(err, req) {
				t.Fatalf("net/http read request %d (%s %s) fine; the guard says %v", i, req.Method, req.RequestURI, err)
			}
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		post = req.Method == "POST"
		consumed := src.n - br.Buffered()
		read.feed(data[fed:consumed])
		fed = consumed
		if read.state == off && (read.h.connect || read.h.upgrade && read.h.connUpgrade) {
			return // CONNECT or Upgrade
		}
		if read.state != inHead || read.size != 0 || read.stop.Load() != 0 {
			t.Fatalf("net/http read request %d (%s %s) in %d bytes; there the guard stands at %+v",
				i, req.Method, req.RequestURI, consumed, read.snapshot())
		}
	}
}

// acceptedByNetHTTP reports whether net/http accepts requests the guard
// refuses with err.
func acceptedByNetHTTP(err error, req *http.Request) bool {
	switch err {
	case problemErrs[lengthAndChunked], problemErrs[chunkedHTTP10], problemErrs[obsFold]:
		return true
	case problemErrs[notChunked]:
		return !req.ProtoAtLeast(1, 1) // net/http ignores Transfer-Encoding there
	}
	return false
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type readerConn struct {
	net.Conn
	r io.Reader
}

func (c *readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestAgainstNetHTTP runs the differential check of FuzzGuard on the table.
func TestAgainstNetHTTP(t *testing.T) {
	for _, tc := range trackCases {
		t.Run(tc.name, func(t *testing.T) {
			checkAgainstNetHTTP(t, []byte(tc.in))
		})
	}
}

// loopConn returns the same request head on every read.
type loopConn struct {
	net.Conn
	head []byte
}

func (c *loopConn) Read(p []byte) (int, error) { return copy(p, c.head), nil }

func BenchmarkGuardRead(b *testing.B) {
	head := []byte("GET /api/v1/items?page=2 HTTP/1.1\r\nHost: shop.example.com\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\nAccept: application/json\r\n" +
		"Accept-Encoding: gzip\r\nCookie: session=0123456789abcdef\r\nX-Request: 1\r\n\r\n")
	buf := make([]byte, 4096)
	for _, bc := range []struct {
		name string
		conn net.Conn
	}{
		{"bare", &loopConn{head: head}},
		{"guard", NewGuard(&loopConn{head: head}, Limits{})},
	} {
		b.Run(fmt.Sprintf("%s/%dB", bc.name, len(head)), func(b *testing.B) {
			b.SetBytes(int64(len(head)))
			b.ReportAllocs()
			for b.Loop() {
				bc.conn.Read(buf)
			}
		})
	}
}
