package daemon

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// sendConfig serves one pool with a short send timeout.
const sendConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
    https: {address: "127.0.0.1:0", tls: {}}
  admin: {socket: "{{.Dir}}/admin.sock"}
  limits: {send_timeout: 500ms}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
    pools:
      p: {members: ["{{.Member}}"]}
`

// bigAnswers is a member that answers /big?<id> with 64 MiB and tells the
// id on released when a write of it failed: ramjetd let go of its
// connection. /slow sends five parts a second apart.
type bigAnswers struct {
	released chan string
}

func startBigAnswers(t *testing.T) (*backend, *bigAnswers) {
	a := &bigAnswers{released: make(chan string, 16)}
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		switch r.URL.Path {
		case "/big":
			for range 2048 {
				if _, err := w.Write(chunk); err != nil {
					a.released <- r.URL.RawQuery
					return
				}
			}
		case "/slow":
			for i := range 5 {
				fmt.Fprintf(w, "part %d\n", i)
				w.(http.Flusher).Flush()
				time.Sleep(time.Second)
			}
		}
	})
	return b, a
}

// waitReleased fails unless the member's connection of request id was
// released within d.
func (a *bigAnswers) waitReleased(t *testing.T, id string, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case got := <-a.released:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("the member was still sending after %v: ramjetd holds its connection", d)
		}
	}
}

// waitSendTimeouts waits up to d for the send timeouts counted to reach
// want.
func (td *testDaemon) waitSendTimeouts(t *testing.T, want float64, d time.Duration) {
	t.Helper()
	for start := time.Now(); testutil.ToFloat64(td.metrics.SendTimeouts) < want; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > d {
			t.Fatalf("ramjet_send_timeouts_total = %v after %v, want %v", testutil.ToFloat64(td.metrics.SendTimeouts), d, want)
		}
	}
}

// dialSmallWindow connects with a small receive buffer, so that a client
// that does not read stops the server's writes soon.
func dialSmallWindow(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestSendTimeoutHTTP1 checks that a client that stops reading a large
// answer loses its connection after the send timeout, that the member's
// connection is released with it and that the metric counts it: on
// ramjetd's own HTTP/1.1 path (a GET) and on net/http's (a request with a
// body), over plain TCP and TLS.
func TestSendTimeoutHTTP1(t *testing.T) {
	b, member := startBigAnswers(t)
	td := startDaemon(t, sendConfig, map[string]any{"Member": b.addr})
	cases := []struct{ name, listener, request string }{
		{"GET, plain", "http", "GET /big?0 HTTP/1.1\r\nHost: app.test\r\n\r\n"},
		{"POST, plain", "http", "POST /big?1 HTTP/1.1\r\nHost: app.test\r\nContent-Length: 3\r\n\r\nabc"},
		{"GET, TLS", "https", "GET /big?2 HTTP/1.1\r\nHost: app.test\r\n\r\n"},
		{"POST, TLS", "https", "POST /big?3 HTTP/1.1\r\nHost: app.test\r\nContent-Length: 3\r\n\r\nabc"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := dialSmallWindow(t, td.bound.get(tc.listener))
			if tc.listener == "https" {
				tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: "app.test", NextProtos: []string{"http/1.1"}})
				if err := tc.Handshake(); err != nil {
					t.Fatal(err)
				}
				conn = tc
			}
			io.WriteString(conn, tc.request) // and never read
			member.waitReleased(t, fmt.Sprint(i), 10*time.Second)
			td.waitSendTimeouts(t, float64(i+1), 5*time.Second)
			if !isClosed(conn) {
				t.Errorf("the client's connection is still open")
			}
		})
	}
}

// TestSendTimeoutSparesSlowParts checks that the send timeout bounds each
// write, not the wait between them: a member that sends its parts a second
// apart, more than the timeout, is passed through whole, over HTTP/1.1 and
// HTTP/2.
func TestSendTimeoutSparesSlowParts(t *testing.T) {
	b, _ := startBigAnswers(t)
	td := startDaemon(t, sendConfig, map[string]any{"Member": b.addr})
	for _, listener := range []string{"http", "https"} {
		t.Run(listener, func(t *testing.T) {
			c := client()
			if listener == "https" {
				c = h2Client(t)
			}
			c.Timeout = 20 * time.Second
			status, body, _ := get(t, c, td.url(listener)+"/slow", "app.test")
			if status != 200 || !strings.HasSuffix(body, "part 4\n") {
				t.Errorf("got %d %q, want the five parts", status, body)
			}
		})
	}
	if n := testutil.ToFloat64(td.metrics.SendTimeouts); n != 0 {
		t.Errorf("ramjet_send_timeouts_total = %v, want 0", n)
	}
}

// TestSendTimeoutHTTP2 checks HTTP/2: a stream the client opens no window
// for is reset after the send timeout while the connection goes on, and a
// connection the client stops reading is closed; either way the member's
// connection is released and the metric counts it.
func TestSendTimeoutHTTP2(t *testing.T) {
	b, member := startBigAnswers(t)
	td := startDaemon(t, sendConfig, map[string]any{"Member": b.addr})
	t.Run("a stream without a window", func(t *testing.T) {
		h := dialH2(t, td.bound.get("https"), 0)
		h.request(t, 1, "/big?stream")
		start := time.Now()
		code := h.waitForReset(t, 1, 5*time.Second)
		if code != http2.ErrCodeInternal {
			t.Errorf("stream reset with %v, want INTERNAL_ERROR", code)
		}
		if waited := time.Since(start); waited < 400*time.Millisecond {
			t.Errorf("reset after %v, before the send timeout (500ms)", waited)
		}
		member.waitReleased(t, "stream", 10*time.Second)
		td.waitSendTimeouts(t, 1, 5*time.Second)
		// The connection serves on.
		h.fr.WritePing(false, [8]byte{1})
		if !h.waitForPingAck(5 * time.Second) {
			t.Errorf("the connection did not answer a PING after the reset")
		}
	})
	t.Run("a connection not read", func(t *testing.T) {
		h := dialH2(t, td.bound.get("https"), 1<<30)
		h.request(t, 1, "/big?connection") // and never read
		member.waitReleased(t, "connection", 10*time.Second)
		td.waitSendTimeouts(t, 2, 5*time.Second)
		if !isClosed(h.conn) {
			t.Errorf("the client's connection is still open")
		}
	})
}

// rawH2 is a raw HTTP/2 client connection.
type rawH2 struct {
	conn net.Conn
	fr   *http2.Framer
}

// dialH2 opens an HTTP/2 connection with a small receive buffer whose
// streams get window as their initial flow-control window (and the
// connection as much), and reads the server's first SETTINGS.
func dialH2(t *testing.T, addr string, window uint32) *rawH2 {
	t.Helper()
	raw := dialSmallWindow(t, addr)
	conn := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, ServerName: "app.test", NextProtos: []string{"h2"}})
	if err := conn.Handshake(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, http2.ClientPreface)
	h := &rawH2{conn: conn, fr: http2.NewFramer(conn, conn)}
	h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window})
	if window > 65535 {
		h.fr.WriteWindowUpdate(0, window-65535)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if f, err := h.fr.ReadFrame(); err != nil {
		t.Fatalf("reading the server's SETTINGS: %v", err)
	} else if _, ok := f.(*http2.SettingsFrame); !ok {
		t.Fatalf("first frame %T, want SETTINGS", f)
	}
	h.fr.WriteSettingsAck()
	return h
}

// request sends a GET of path on stream id.
func (h *rawH2) request(t *testing.T, id uint32, path string) {
	t.Helper()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "app.test"}, {":path", path}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
}

// next reads the next frame, waiting until deadline at most.
func (h *rawH2) next(deadline time.Time) (http2.Frame, error) {
	h.conn.SetReadDeadline(deadline)
	return h.fr.ReadFrame()
}

// waitForReset reads frames until stream id is reset, and returns the code.
func (h *rawH2) waitForReset(t *testing.T, id uint32, d time.Duration) http2.ErrCode {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		f, err := h.next(deadline)
		if err != nil {
			t.Fatalf("stream %d not reset within %v: %v", id, d, err)
		}
		if rst, ok := f.(*http2.RSTStreamFrame); ok && rst.StreamID == id {
			return rst.ErrCode
		}
	}
}

// waitForPingAck reads frames until a PING acknowledgement.
func (h *rawH2) waitForPingAck(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		f, err := h.next(deadline)
		if err != nil {
			return false
		}
		if p, ok := f.(*http2.PingFrame); ok && p.IsAck() {
			return true
		}
	}
}
