package listener_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/listener"
)

const maxHeaderBytes = 1024

// echo refuses a request its guard has a verdict against, and otherwise
// answers with the method, the path, the length of the body, the protocol
// and whether the request came over TLS.
func echo(w http.ResponseWriter, r *http.Request) {
	g := listener.FromContext(r.Context())
	if g == nil && r.ProtoMajor == 1 {
		http.Error(w, "no guard", http.StatusInternalServerError)
		return
	}
	if g != nil && (g.TLS() != nil) != (r.TLS != nil) {
		http.Error(w, "the guard and net/http disagree on TLS", http.StatusInternalServerError)
		return
	}
	if err := g.Verdict(); err != nil {
		w.Header().Set("Connection", "close")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/upgrade" {
		afterUpgrade(w, g)
		return
	}
	n, _ := io.Copy(io.Discard, r.Body)
	fmt.Fprintf(w, "%s %s %d HTTP/%d tls=%t", r.Method, r.URL.Path, n, r.ProtoMajor, r.TLS != nil)
}

// afterUpgrade switches protocols, reads upgraded (which looks like an
// ambiguous request), and tells whether the guard then has a verdict against
// a further request.
func afterUpgrade(w http.ResponseWriter, g *listener.Guard) {
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
	brw.Flush()
	if _, err := io.ReadFull(brw, make([]byte, len(upgraded))); err != nil {
		return
	}
	fmt.Fprintf(c, "after: %v\n", g.Verdict())
}

// serve serves echo on l until the test ends.
func serve(t *testing.T, l net.Listener) {
	t.Helper()
	srv := &http.Server{
		Handler:        http.HandlerFunc(echo),
		ConnContext:    listener.ConnContext,
		MaxHeaderBytes: maxHeaderBytes,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
}

func plainServer(t *testing.T) string {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := listener.Plain(inner, listener.Limits{MaxHeadBytes: maxHeaderBytes + 4096})
	serve(t, l)
	return l.Addr().String()
}

type reply struct {
	status int
	body   string
}

func (r reply) String() string { return fmt.Sprintf("%d %q", r.status, r.body) }

// roundTrip writes raw to c in writes of at most chunk bytes (all at once
// when chunk is 0) and reads up to n responses, stopping early at the end of
// the connection.
func roundTrip(t *testing.T, c net.Conn, raw string, chunk, n int) []reply {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go write(c, raw, chunk)
	br := bufio.NewReader(c)
	var replies []reply
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			break
		}
		body, _ := io.ReadAll(resp.Body)
		replies = append(replies, reply{resp.StatusCode, string(body)})
	}
	return replies
}

func write(c net.Conn, raw string, chunk int) {
	if chunk == 0 {
		chunk = len(raw)
	}
	for len(raw) > 0 {
		n := min(chunk, len(raw))
		if _, err := io.WriteString(c, raw[:n]); err != nil {
			return
		}
		raw = raw[n:]
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const (
	getA    = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
	postB   = "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
	postC   = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6;q=\"x\" \r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
	getD    = "GET /d HTTP/1.1\r\nHost: x\r\n\r\n"
	smuggle = "POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 35\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
)

// upgraded is what a client sends after an upgrade.
const upgraded = "\x81\x05hello" + smuggle

var keepAliveWant = []string{"GET /a 0 HTTP/1 tls=false", "POST /b 5 HTTP/1 tls=false", "POST /c 11 HTTP/1 tls=false", "GET /d 0 HTTP/1 tls=false"}

// TestAmbiguous sends one request per connection.
func TestAmbiguous(t *testing.T) {
	addr := plainServer(t)
	for _, tc := range []struct {
		name     string
		req      string
		want     int // 0: anything but 2xx
		wantBody string
	}{
		{"cl then te", smuggle, 400, "Content-Length together with Transfer-Encoding"},
		{"te then cl", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400, "Content-Length together with Transfer-Encoding"},
		{"te chunked, identity", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 0, ""},
		{"te chunked, identity with cl", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 0, ""},
		{"te tab chunked with cl", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: \tchunked\r\n\r\n0\r\n\r\n", 400, "Content-Length together with Transfer-Encoding"},
		{"te tab chunked alone is chunked", "POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \tchunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", 200, "POST /t 1"},
		{"te xchunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 0, ""},
		{"te xchunked with cl", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 0, ""},
		{"te in http/1.0", "POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "Transfer-Encoding in an HTTP/1.0 request"},
		{"differing cl", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy", 400, ""},
		{"identical cl", "POST /i HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nxy", 200, "POST /i 2"},
		{"obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n", 400, "obsolete line folding"},
		{"obs-fold hiding te", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nX: y\r\n Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "obsolete line folding"},
		{"space before colon", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := roundTrip(t, dial(t, addr), tc.req, 0, 1)
			if len(got) != 1 {
				t.Fatalf("got %d responses %v, want 1", len(got), got)
			}
			switch {
			case tc.want == 0 && got[0].status/100 == 2:
				t.Errorf("got %v, want anything but 2xx", got[0])
			case tc.want != 0 && got[0].status != tc.want:
				t.Errorf("got %v, want status %d", got[0], tc.want)
			}
			if !strings.Contains(got[0].body, tc.wantBody) {
				t.Errorf("got %v, want a body containing %q", got[0], tc.wantBody)
			}
		})
	}
}

// TestKeepAlive sends several requests on one connection.
func TestKeepAlive(t *testing.T) {
	addr := plainServer(t)
	t.Run("one at a time", func(t *testing.T) {
		c := dial(t, addr)
		for i, req := range []string{getA, postB, postC, getD} {
			got := roundTrip(t, c, req, 0, 1)
			if len(got) != 1 || got[0].status != 200 || got[0].body != keepAliveWant[i] {
				t.Fatalf("request %d: got %v, want 200 %q", i, got, keepAliveWant[i])
			}
		}
	})
	for _, tc := range []struct {
		name  string
		chunk int
	}{{"pipelined", 0}, {"pipelined one byte per write", 1}, {"pipelined 7 bytes per write", 7}} {
		t.Run(tc.name, func(t *testing.T) {
			got := roundTrip(t, dial(t, addr), getA+postB+postC+getD, tc.chunk, 4)
			if len(got) != 4 {
				t.Fatalf("got %d responses %v, want 4", len(got), got)
			}
			for i, r := range got {
				if r.status != 200 || r.body != keepAliveWant[i] {
					t.Errorf("response %d: got %v, want 200 %q", i, r, keepAliveWant[i])
				}
			}
		})
	}
	t.Run("after OPTIONS *, which net/http answers itself", func(t *testing.T) {
		got := roundTrip(t, dial(t, addr), "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"+getA+smuggle+getD, 0, 4)
		want := []reply{{200, ""}, {200, keepAliveWant[0]}, {400, "ambiguous request framing: Content-Length together with Transfer-Encoding\n"}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("bad fourth in a pipeline", func(t *testing.T) {
		got := roundTrip(t, dial(t, addr), getA+postB+postC+smuggle+getD, 0, 6)
		if len(got) != 4 {
			t.Fatalf("got %d responses %v, want 4 and the end of the connection", len(got), got)
		}
		for i, r := range got[:3] {
			if r.status != 200 || r.body != keepAliveWant[i] {
				t.Errorf("response %d: got %v, want 200 %q", i, r, keepAliveWant[i])
			}
		}
		if got[3].status != 400 {
			t.Errorf("response 3: got %v, want 400", got[3])
		}
	})
}

// TestUpgrade checks that the bytes of an upgraded stream are not taken for
// requests (the upgrade itself is fine), and that nothing after an upgrade
// request passes as a request: the tracker cannot know where one starts.
func TestUpgrade(t *testing.T) {
	addr := plainServer(t)
	c := dial(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got status %d, want 101", resp.StatusCode)
	}
	io.WriteString(c, upgraded)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := "after: ambiguous request framing: request boundaries could not be followed\n"; line != want {
		t.Errorf("got %q, want %q", line, want)
	}
}

// TestLongHead checks that net/http itself refuses a head the guard gives up on.
func TestLongHead(t *testing.T) {
	addr := plainServer(t)
	req := "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("a", maxHeaderBytes+8192) + "\r\n\r\n"
	got := roundTrip(t, dial(t, addr), req, 0, 1)
	if len(got) != 1 || got[0].status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("got %v, want one 431", got)
	}
}

// TestRequestAfterRefusedUpgrade sends an upgrade request that the handler
// answers without switching, then a smuggling attempt on the same
// connection: it must be refused although the tracker stopped reading.
func TestRequestAfterRefusedUpgrade(t *testing.T) {
	addr := plainServer(t)
	req := "GET /no-switch HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n" + smuggle
	got := roundTrip(t, dial(t, addr), req, 0, 2)
	if len(got) != 2 || got[0].status != 200 || got[1].status != 400 {
		t.Errorf("got %v, want 200 then 400", got)
	}
}
