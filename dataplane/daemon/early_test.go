package daemon

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// earlyConfig serves routes that answer without reading a request body:
// a deny list, basic auth, a host nobody serves; and a pool for the 408.
const earlyConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
    https: {address: "127.0.0.1:0", tls: {}}
  admin: {socket: "{{.Dir}}/admin.sock"}
  limits: {read_body_timeout: 300ms, lingering_time: {{.Time}}, lingering_timeout: {{.Timeout}}}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /admin}}
            action: {pool: p}
            policies: {deny: [127.0.0.0/8]}
          - match: {path: {prefix: /private}}
            action: {pool: p}
            policies: {basic_auth: {file: "{{.Htpasswd}}", realm: "r"}}
          - match: {path: {prefix: /}}
            action: {pool: p}
    pools:
      p: {members: ["{{.Member}}"]}
`

// earlyCases are requests that declare a body, send none of it (or a
// part), and are answered without it being read.
var earlyCases = []struct {
	name   string
	head   string
	status int
}{
	{"unknown host", "GET / HTTP/1.1\r\nHost: unknown.invalid\r\nContent-Length: 1\r\n\r\n", 404},
	{"denied by the allow list", "POST /admin HTTP/1.1\r\nHost: app.test\r\nContent-Length: 100\r\n\r\n", 403},
	{"denied, chunked", "POST /admin HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\n\r\n", 403},
	{"denied, expecting 100-continue", "POST /admin HTTP/1.1\r\nHost: app.test\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", 403},
	{"basic auth without credentials", "POST /private HTTP/1.1\r\nHost: app.test\r\nContent-Length: 100\r\n\r\n", 401},
	{"a path climbing above /", "POST /../x HTTP/1.1\r\nHost: app.test\r\nContent-Length: 100\r\n\r\n", 400},
	{"ambiguous framing", "POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
	{"body timed out (408)", "POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 100\r\n\r\nabc", 408},
}

// TestEarlyAnswers checks every way ramjetd answers a request without
// reading its declared body: the answer comes at once (without a 100
// Continue), says Connection: close, and the connection is closed within
// lingering_timeout of a client that then sends nothing, over plain TCP and
// over TLS.
func TestEarlyAnswers(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, earlyConfig, map[string]any{
		"Member": b.addr, "Htpasswd": htpasswd(t, t.TempDir()), "Time": "2s", "Timeout": "500ms",
	})
	for _, listener := range []string{"http", "https"} {
		for _, tc := range earlyCases {
			t.Run(listener+"/"+tc.name, func(t *testing.T) {
				before := td.lingerEnds()
				conn := dialListener(t, td, listener)
				sent := time.Now()
				io.WriteString(conn, tc.head)
				br := bufio.NewReader(conn)
				resp := readAnswer(t, br, conn, 5*time.Second)
				if resp.StatusCode != tc.status || !resp.Close {
					t.Errorf("got %d, Connection: close %v; want %d with Connection: close", resp.StatusCode, resp.Close, tc.status)
				}
				// The 408 comes after read_body_timeout; the others at
				// once. The bound is loose: the machine is shared.
				if wait := time.Since(sent); wait > 3*time.Second {
					t.Errorf("the answer took %v", wait)
				}
				// lingering_timeout is 500ms: closed well before
				// lingering_time (2s).
				held := td.lingered(t, conn, before, "quiet", 5*time.Second)
				if held > 1800*time.Millisecond {
					t.Errorf("the connection was closed %v after the answer, want about 500ms (lingering_timeout)", held)
				}
			})
		}
	}
}

// TestLingeringClose checks the two bounds of the drain after an early
// answer: a client that keeps sending its body is closed on at
// lingering_time, and what it sent meanwhile does not destroy the answer
// (the connection is not reset before the client could read it).
func TestLingeringClose(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, earlyConfig, map[string]any{
		"Member": b.addr, "Htpasswd": htpasswd(t, t.TempDir()), "Time": "1500ms", "Timeout": "400ms",
	})
	t.Run("a client that keeps sending is closed on at lingering_time", func(t *testing.T) {
		before := td.lingerEnds()
		conn := dialListener(t, td, "http")
		io.WriteString(conn, "POST /admin HTTP/1.1\r\nHost: app.test\r\nContent-Length: 100000000\r\n\r\n")
		start := time.Now()
		stop := make(chan struct{})
		defer close(stop)
		go trickle(conn, stop, 100*time.Millisecond)
		br := bufio.NewReader(conn)
		if resp := readAnswer(t, br, conn, 5*time.Second); resp.StatusCode != 403 {
			t.Fatalf("got %d, want 403", resp.StatusCode)
		}
		td.lingered(t, conn, before, "time_up", 6*time.Second)
		if held := time.Since(start); held < 1200*time.Millisecond || held > 4*time.Second {
			t.Errorf("closed after %v, want about 1.5s (lingering_time; it kept sending every 100ms, under lingering_timeout)", held)
		}
	})
	t.Run("a large body sent after the head does not reset the answer", func(t *testing.T) {
		for range 5 {
			conn := dialListener(t, td, "http")
			// The whole request at once: the head and 4 MiB of a body
			// nobody reads, more than the socket buffers hold.
			go func() {
				io.WriteString(conn, "POST /admin HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4194304\r\n\r\n")
				conn.Write(make([]byte, 4<<20))
			}()
			time.Sleep(50 * time.Millisecond) // the answer is sent while the body arrives
			br := bufio.NewReader(conn)
			resp := readAnswer(t, br, conn, 5*time.Second)
			body, err := io.ReadAll(resp.Body)
			if resp.StatusCode != 403 || err != nil || !strings.Contains(string(body), "Forbidden") {
				t.Fatalf("got %d %q, %v; want the whole 403", resp.StatusCode, body, err)
			}
		}
	})
	t.Run("other requests are served meanwhile", func(t *testing.T) {
		if status, _, _ := rawGet(t, td.bound.get("http"), "app.test", "/"); status != 200 {
			t.Errorf("a normal request got %d", status)
		}
	})
}

// TestBodyReadIsNotEarly checks that a body the member read keeps the
// connection: only answers sent before the body was read close it.
func TestBodyReadIsNotEarly(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, earlyConfig, map[string]any{
		"Member": b.addr, "Htpasswd": htpasswd(t, t.TempDir()), "Time": "2s", "Timeout": "500ms",
	})
	conn := dialListener(t, td, "http")
	br := bufio.NewReader(conn)
	for i := range 3 {
		io.WriteString(conn, "POST /x HTTP/1.1\r\nHost: app.test\r\nContent-Length: 5\r\n\r\nhello")
		resp := readAnswer(t, br, conn, 5*time.Second)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Close || string(body) != "b POST /x 5" {
			t.Fatalf("request %d: got %d %q, Connection: close %v; want 200 on a kept connection", i, resp.StatusCode, body, resp.Close)
		}
	}
	// A body the member reads is asked for with 100 Continue.
	io.WriteString(conn, "POST /x HTTP/1.1\r\nHost: app.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("got %v %v, want 100 Continue before the body", resp, err)
	}
	io.WriteString(conn, "hello")
	resp := readAnswer(t, br, conn, 5*time.Second)
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || resp.Close || string(body) != "b POST /x 5" {
		t.Fatalf("after 100 Continue: got %d %q, Connection: close %v; want 200 on a kept connection", resp.StatusCode, body, resp.Close)
	}
}

// dialListener connects to a listener of the daemon, with TLS for https.
func dialListener(t *testing.T, td *testDaemon, name string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", td.bound.get(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if name != "https" {
		return conn
	}
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: "app.test", NextProtos: []string{"http/1.1"}})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc
}

// readAnswer reads one final answer (failing on a 100 Continue) within d.
func readAnswer(t *testing.T, br *bufio.Reader, conn net.Conn, d time.Duration) *http.Response {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", d, err)
	}
	if resp.StatusCode == http.StatusContinue {
		t.Fatalf("got 100 Continue for a body nobody reads")
	}
	return resp
}

// lingerEnds counts the lingering closes that have ended, by how.
func (td *testDaemon) lingerEnds() map[string]float64 {
	counts := map[string]float64{}
	for _, e := range []string{"client_closed", "quiet", "time_up"} {
		counts[e] = testutil.ToFloat64(td.metrics.LingeringCloses.WithLabelValues(e))
	}
	return counts
}

// lingered waits up to d for the daemon to end the lingering close of one
// more connection than before counted (taken before the request was
// sent), which must end as end says, and returns how long that took. conn
// must be that connection: the client saw the answer end (the server shut
// its side down), and once the server has closed, what the client still
// writes is answered with a reset.
func (td *testDaemon) lingered(t *testing.T, conn net.Conn, before map[string]float64, end string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	conn.SetReadDeadline(start.Add(d))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		t.Fatalf("after the answer: %v, want the end of the stream", err)
	}
	for td.lingerEnds()[end] == before[end] {
		if time.Since(start) > d {
			t.Fatalf("no lingering close ended %q within %v", end, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := time.Since(start)
	for e, n := range td.lingerEnds() {
		if e != end && n != before[e] {
			t.Errorf("a lingering close ended %q, want %q", e, end)
		}
	}
	if !isClosed(conn) {
		t.Errorf("the lingering close ended but the connection is open")
	}
	return held
}

// isClosed reports whether the peer has closed conn: the first write to a
// closed socket draws a reset, after which writes fail.
func isClosed(conn net.Conn) bool {
	conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
	for range 20 {
		if _, err := conn.Write([]byte{'x'}); err != nil {
			return !errors.Is(err, os.ErrDeadlineExceeded)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// trickle writes a byte every interval until stop or a failed write.
func trickle(conn net.Conn, stop <-chan struct{}, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if _, err := conn.Write([]byte{'x'}); err != nil {
				return
			}
		}
	}
}
