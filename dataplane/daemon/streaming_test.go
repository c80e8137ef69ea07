package daemon

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file checks what ramjetd does with bodies that are not one small
// request and one small answer: streams that must be flushed event by event,
// WebSocket upgrades, gRPC over h2c and h2 with trailers, verified HTTPS to
// members, large bodies and HTTP/1.1 trailers. Every backend listens on
// 127.0.0.1 only.

// streamTimeout bounds every wait of this file, so that a failure fails
// instead of hanging.
const streamTimeout = 5 * time.Second

// startStreamServer serves srv on 127.0.0.1, over TLS when tlsConfig is not
// nil, counting requests and connections like startBackend, and closes it
// when the test ends. The caller sets srv.Protocols and srv.Handler.
func startStreamServer(t *testing.T, srv *http.Server, tlsConfig *tls.Config) *backend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{addr: ln.Addr().String(), server: srv}
	inner := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.requests.Add(1)
		inner.ServeHTTP(w, r)
	})
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			b.conns.Add(1)
		}
	}
	// Refused handshakes are expected in some tests; keep them off stderr.
	srv.ErrorLog = log.New(io.Discard, "", 0)
	if tlsConfig != nil {
		srv.TLSConfig = tlsConfig
		go srv.ServeTLS(ln, "", "")
	} else {
		go srv.Serve(ln)
	}
	t.Cleanup(func() { srv.Close() })
	return b
}

// streamTLSConfig is the TLS configuration of a backend with the given PEM
// certificate and key, offering the given ALPN protocols.
func streamTLSConfig(t *testing.T, certPEM, keyPEM []byte, protos ...string) *tls.Config {
	t.Helper()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos}
}

// streamProtocols returns an http.Protocols with exactly the ones named set.
func streamProtocols(http1, http2, h2c bool) *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(http1)
	p.SetHTTP2(http2)
	p.SetUnencryptedHTTP2(h2c)
	return p
}

// h2Client is an HTTP client that speaks HTTP/2 to ramjetd's TLS listener
// (whose default certificate is self-signed).
func h2Client(t *testing.T) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		ForceAttemptHTTP2: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 2 * streamTimeout}
}

// streamClientFor returns the client for a listener: HTTP/1.1 for "http",
// HTTP/2 for "https".
func streamClientFor(t *testing.T, listener string) *http.Client {
	if listener == "https" {
		return h2Client(t)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 2 * streamTimeout}
}

// wantProto checks that the client spoke the protocol of the listener.
func wantProto(t *testing.T, listener string, resp *http.Response) {
	t.Helper()
	want := 1
	if listener == "https" {
		want = 2
	}
	if resp.ProtoMajor != want {
		t.Fatalf("client got %s from the %s listener, want HTTP/%d", resp.Proto, listener, want)
	}
}

// oneRouteApp is the YAML of an application with one domain whose every
// path goes to pool.
func oneRouteApp(name, domain, pool string) string {
	return fmt.Sprintf("      %s:\n        domains: [%s]\n        routes:\n          - match: {path: {prefix: /}}\n            action: {pool: %s}\n", name, domain, pool)
}

// ---------------------------------------------------------------------------
// 1. Streaming: per-event flushing of server-sent events and chunked bodies.

var streamFlushConfig = baseConfig + `
tenants:
  stream:
    applications:
` + oneRouteApp("events", "events.test", "events") + `
    pools:
      events: {members: ["{{.Backend}}"]}
`

// TestStreamingFlush proves that ramjetd sends each piece of a streamed
// response as soon as the backend flushes it: the backend writes a first
// piece, flushes and then waits for the test, which must read that piece
// before it lets the backend write the second.
func TestStreamingFlush(t *testing.T) {
	var releases sync.Map // id → chan struct{}
	be := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		first, second := "data: one\n\n", "data: two\n\n"
		switch r.URL.Path {
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
		case "/sse-length":
			// A known length: only the event-stream rule makes the proxy
			// flush.
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Length", strconv.Itoa(len(first)+len(second)))
		case "/chunked":
			w.Header().Set("Content-Type", "application/octet-stream")
			first, second = "part one\n", "part two\n"
		default:
			http.NotFound(w, r)
			return
		}
		v, ok := releases.Load(r.URL.Query().Get("id"))
		if !ok {
			http.Error(w, "unknown id", http.StatusBadRequest)
			return
		}
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-v.(chan struct{}):
		case <-r.Context().Done():
			return
		case <-time.After(2 * streamTimeout):
			return
		}
		io.WriteString(w, second)
	})
	td := startDaemon(t, streamFlushConfig, map[string]any{"Backend": be.addr})

	cases := []struct {
		name, listener, path string
		contentType          string
		first, second        string
	}{
		{"event stream over HTTP/1.1", "http", "/sse", "text/event-stream", "data: one", "data: two"},
		{"event stream over HTTP/2", "https", "/sse", "text/event-stream", "data: one", "data: two"},
		{"event stream of known length over HTTP/1.1", "http", "/sse-length", "text/event-stream", "data: one", "data: two"},
		{"event stream of known length over HTTP/2", "https", "/sse-length", "text/event-stream", "data: one", "data: two"},
		{"chunked body over HTTP/1.1", "http", "/chunked", "application/octet-stream", "part one", "part two"},
		{"chunked body over HTTP/2", "https", "/chunked", "application/octet-stream", "part one", "part two"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := strconv.Itoa(i)
			release := make(chan struct{})
			releases.Store(id, release)
			var once sync.Once
			doRelease := func() { once.Do(func() { close(release) }) }
			defer doRelease()

			ctx, cancel := context.WithTimeout(t.Context(), 2*streamTimeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, td.url(tc.listener)+tc.path+"?id="+id, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = "events.test"
			c := streamClientFor(t, tc.listener)
			c.Timeout = 0 // the context bounds the request

			type head struct {
				resp *http.Response
				err  error
			}
			heads := make(chan head, 1)
			lines := make(chan string, 16)
			readErr := make(chan error, 1)
			go func() {
				resp, err := c.Do(req)
				heads <- head{resp, err}
				if err != nil {
					return
				}
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadString('\n')
					if line = strings.TrimSpace(line); line != "" {
						lines <- line
					}
					if err != nil {
						if err != io.EOF {
							readErr <- err
						}
						close(lines)
						return
					}
				}
			}()

			// Before the release: the head and the first piece.
			deadline := time.After(streamTimeout)
			select {
			case h := <-heads:
				if h.err != nil {
					t.Fatalf("request: %v", h.err)
				}
				wantProto(t, tc.listener, h.resp)
				if h.resp.StatusCode != http.StatusOK || h.resp.Header.Get("Content-Type") != tc.contentType {
					t.Fatalf("got %d %q, want 200 %q", h.resp.StatusCode, h.resp.Header.Get("Content-Type"), tc.contentType)
				}
			case <-deadline:
				t.Fatalf("no response head within %v while the backend holds the second piece: the first piece was not flushed", streamTimeout)
			}
			select {
			case line := <-lines:
				if line != tc.first {
					t.Fatalf("first piece: got %q, want %q", line, tc.first)
				}
			case err := <-readErr:
				t.Fatalf("reading the first piece: %v", err)
			case <-deadline:
				t.Fatalf("first piece %q not received within %v while the backend holds the second: not flushed", tc.first, streamTimeout)
			}

			// After the release: the second piece and the end.
			doRelease()
			var rest []string
			timeout := time.After(streamTimeout)
		collect:
			for {
				select {
				case line, ok := <-lines:
					if !ok {
						break collect
					}
					rest = append(rest, line)
				case err := <-readErr:
					t.Fatalf("reading the second piece: %v", err)
				case <-timeout:
					t.Fatalf("the response did not end within %v after the release (got %q)", streamTimeout, rest)
				}
			}
			if len(rest) != 1 || rest[0] != tc.second {
				t.Fatalf("after the release: got %q, want [%q]", rest, tc.second)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 2. WebSocket.

// wsGUID is the constant of RFC 6455 §1.3.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	sum := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// wsFrame is one WebSocket frame.
type wsFrame struct {
	fin     bool
	opcode  byte
	masked  bool
	lenCode byte // the 7-bit payload length field: the length, 126 or 127
	payload []byte
}

// wsWriteFrame writes a final frame, masked when mask is true (client to
// server), with the shortest length form.
func wsWriteFrame(w io.Writer, opcode byte, payload []byte, mask bool) error {
	hdr := []byte{0x80 | opcode}
	var maskBit byte
	if mask {
		maskBit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, maskBit|byte(n))
	case n <= 0xFFFF:
		hdr = append(hdr, maskBit|126)
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr = append(hdr, maskBit|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	body := payload
	if mask {
		var key [4]byte
		rand.Read(key[:])
		hdr = append(hdr, key[:]...)
		body = make([]byte, len(payload))
		for i := range payload {
			body[i] = payload[i] ^ key[i%4]
		}
	}
	_, err := w.Write(append(hdr, body...))
	return err
}

// wsReadFrame reads one frame and unmasks its payload.
func wsReadFrame(r io.Reader) (wsFrame, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return wsFrame{}, err
	}
	f := wsFrame{fin: hdr[0]&0x80 != 0, opcode: hdr[0] & 0x0F, masked: hdr[1]&0x80 != 0, lenCode: hdr[1] & 0x7F}
	n := uint64(f.lenCode)
	switch f.lenCode {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return f, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return f, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	if n > 16<<20 {
		return f, fmt.Errorf("frame of %d bytes is too large for this test", n)
	}
	var key [4]byte
	if f.masked {
		if _, err := io.ReadFull(r, key[:]); err != nil {
			return f, err
		}
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return f, err
	}
	if f.masked {
		for i := range f.payload {
			f.payload[i] ^= key[i%4]
		}
	}
	return f, nil
}

// wsEchoHandler completes the RFC 6455 handshake itself, then echoes every
// masked frame back unmasked. A frame that arrives unmasked (which a proxy
// that rewrote the stream could cause) is answered with a close frame
// saying so.
func wsEchoHandler(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" ||
		!strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") ||
		r.Header.Get("Sec-WebSocket-Version") != "13" {
		http.Error(w, fmt.Sprintf("not a WebSocket handshake: Connection %q Upgrade %q", r.Header.Get("Connection"), r.Header.Get("Upgrade")), http.StatusBadRequest)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(4 * streamTimeout))
	fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", wsAccept(key))
	if greeting := r.URL.Query().Get("greet"); greeting != "" {
		// A server that speaks first: the frame leaves in the same
		// segment as the 101.
		wsWriteFrame(brw, 0x1, []byte(greeting), false)
	}
	if err := brw.Flush(); err != nil {
		return
	}
	for {
		f, err := wsReadFrame(brw.Reader)
		if err != nil {
			return
		}
		if !f.masked {
			wsWriteFrame(conn, 0x8, append([]byte{0x03, 0xEA}, "backend got an unmasked frame"...), false)
			return
		}
		if f.opcode == 0x8 {
			wsWriteFrame(conn, 0x8, f.payload, false)
			return
		}
		if err := wsWriteFrame(conn, f.opcode, f.payload, false); err != nil {
			return
		}
	}
}

// wsConn is the client side of a WebSocket through ramjetd.
type wsConn struct {
	conn net.Conn
	br   *bufio.Reader
}

// wsDial opens a WebSocket to ws.test/path through the listener, over TLS
// with ALPN http/1.1 for "https", and checks the 101.
func wsDial(t *testing.T, td *testDaemon, listener, path string) *wsConn {
	t.Helper()
	var conn net.Conn
	var err error
	if listener == "https" {
		var tc *tls.Conn
		tc, err = tls.DialWithDialer(&net.Dialer{Timeout: streamTimeout}, "tcp", td.bound.get("https"),
			&tls.Config{InsecureSkipVerify: true, ServerName: "ws.test", NextProtos: []string{"http/1.1"}})
		if err == nil {
			if p := tc.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
				tc.Close()
				t.Fatalf("ALPN chose %q, want http/1.1", p)
			}
		}
		conn = tc
	} else {
		conn, err = net.DialTimeout("tcp", td.bound.get("http"), streamTimeout)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(2 * streamTimeout))

	var raw [16]byte
	rand.Read(raw[:])
	key := base64.StdEncoding.EncodeToString(raw[:])
	handshake := "GET " + path + " HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(conn, handshake); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("reading the handshake answer: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		t.Fatalf("handshake: got %d %q, want 101", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get("Sec-WebSocket-Accept"), wsAccept(key); got != want {
		t.Fatalf("Sec-WebSocket-Accept: got %q, want %q", got, want)
	}
	if got := resp.Header.Get("Upgrade"); !strings.EqualFold(got, "websocket") {
		t.Fatalf("Upgrade: got %q, want websocket", got)
	}
	if got := resp.Header.Get("Connection"); !strings.EqualFold(got, "upgrade") {
		t.Fatalf("Connection: got %q, want Upgrade", got)
	}
	return &wsConn{conn: conn, br: br}
}

// echo sends one masked frame and checks the unmasked echo.
func (c *wsConn) echo(t *testing.T, opcode byte, payload []byte) {
	t.Helper()
	if err := wsWriteFrame(c.conn, opcode, payload, true); err != nil {
		t.Fatalf("sending a frame of %d bytes: %v", len(payload), err)
	}
	c.expect(t, opcode, payload)
}

func (c *wsConn) expect(t *testing.T, opcode byte, payload []byte) {
	t.Helper()
	f, err := wsReadFrame(c.br)
	if err != nil {
		t.Fatalf("reading the echo of a frame of %d bytes: %v", len(payload), err)
	}
	if f.opcode != opcode || !f.fin || f.masked {
		t.Fatalf("echo: got opcode %#x fin %v masked %v (payload %s), want opcode %#x fin true masked false", f.opcode, f.fin, f.masked, abbrev(f.payload), opcode)
	}
	if !bytes.Equal(f.payload, payload) {
		t.Fatalf("echo payload: got %s, want %s", abbrev(f.payload), abbrev(payload))
	}
	wantCode := byte(len(payload))
	switch {
	case len(payload) > 0xFFFF:
		wantCode = 127
	case len(payload) >= 126:
		wantCode = 126
	}
	if f.lenCode != wantCode {
		t.Fatalf("echo length form: got %d, want %d", f.lenCode, wantCode)
	}
}

var streamWSConfig = baseConfig + `
tenants:
  live:
    applications:
` + oneRouteApp("chat", "ws.test", "chat") + `
    pools:
      chat: {members: ["{{.Backend}}"]}
`

// TestWebSocket proves that an upgrade through ramjetd reaches the backend
// with its handshake intact and that frames of every length form pass both
// ways unchanged, over the plain listener, over TLS (ALPN http/1.1), and
// across a reload.
func TestWebSocket(t *testing.T) {
	be := startBackend(t, wsEchoHandler)
	data := map[string]any{"Backend": be.addr}
	td := startDaemon(t, streamWSConfig, data)

	large := make([]byte, 100<<10) // > 64 KiB: the 127 length form
	rand.Read(large)
	medium := bytes.Repeat([]byte("0123456789"), 30) // 126 length form

	for _, listener := range []string{"http", "https"} {
		t.Run("echo over "+listener, func(t *testing.T) {
			c := wsDial(t, td, listener, "/chat?room=1")
			c.echo(t, 0x1, []byte("hello"))
			c.echo(t, 0x1, []byte("world, a second text frame"))
			c.echo(t, 0x1, medium)
			c.echo(t, 0x2, large)
			c.echo(t, 0x8, []byte{0x03, 0xE8}) // close, 1000
		})
	}

	t.Run("server speaks first", func(t *testing.T) {
		c := wsDial(t, td, "http", "/chat?greet=welcome")
		c.expect(t, 0x1, []byte("welcome"))
		c.echo(t, 0x1, []byte("hello"))
	})

	t.Run("a reload keeps an open WebSocket", func(t *testing.T) {
		c := wsDial(t, td, "http", "/chat")
		c.echo(t, 0x1, []byte("before the reload"))
		before := td.current.Load().number
		td.write(t, streamWSConfig, data)
		if gen := td.reload(t); gen <= before {
			t.Fatalf("reload: got generation %d, want more than %d", gen, before)
		}
		c.echo(t, 0x1, []byte("after the reload"))
		c.echo(t, 0x2, large)
		// A new WebSocket works on the new generation too.
		c2 := wsDial(t, td, "http", "/chat")
		c2.echo(t, 0x1, []byte("new connection"))
	})
}

// ---------------------------------------------------------------------------
// 3 and 4. gRPC unary calls over h2c and over TLS h2.

const grpcPath = "/echo.Echo/Say"

// grpcMessage frames a gRPC message: uncompressed flag, big-endian length,
// payload.
func grpcMessage(payload []byte) []byte {
	out := []byte{0}
	out = binary.BigEndian.AppendUint32(out, uint32(len(payload)))
	return append(out, payload...)
}

// grpcParse returns the payload of exactly one uncompressed message.
func grpcParse(b []byte) ([]byte, error) {
	if len(b) < 5 {
		return nil, fmt.Errorf("message of %d bytes has no complete prefix", len(b))
	}
	if b[0] != 0 {
		return nil, fmt.Errorf("compressed flag %d", b[0])
	}
	n := binary.BigEndian.Uint32(b[1:5])
	if uint64(len(b)-5) != uint64(n) {
		return nil, fmt.Errorf("prefix says %d bytes, %d follow", n, len(b)-5)
	}
	return b[5:], nil
}

// grpcEchoHandler is the unary method echo.Echo/Say: it answers "echo: "
// and the request's message, with grpc-status 0 and grpc-message ok in
// declared trailers. It reports the protocol and TE it received in headers.
func grpcEchoHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != grpcPath || r.Header.Get("Content-Type") != "application/grpc" {
		http.Error(w, "not echo.Echo/Say", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	msg, err := grpcParse(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Trailer", "Grpc-Status, Grpc-Message")
	h.Set("X-Backend-Proto", r.Proto)
	h.Set("X-Backend-Te", r.Header.Get("Te"))
	w.WriteHeader(http.StatusOK)
	w.Write(grpcMessage(append([]byte("echo: "), msg...)))
	h.Set("Grpc-Status", "0")
	h.Set("Grpc-Message", "ok")
}

// grpcCall sends one unary call through ramjetd's TLS listener over HTTP/2.
// With unknownLength the request has no content-length, as grpc-go sends
// it.
func grpcCall(t *testing.T, c *http.Client, td *testDaemon, host string, msg []byte, unknownLength bool) (*http.Response, []byte) {
	t.Helper()
	var reqBody io.Reader = bytes.NewReader(grpcMessage(msg))
	if unknownLength {
		reqBody = io.MultiReader(reqBody) // hides the length from net/http
	}
	req, err := http.NewRequest(http.MethodPost, td.url("https")+grpcPath, reqBody)
	if err != nil {
		t.Fatal(err)
	}
	if unknownLength {
		req.ContentLength = -1
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("gRPC call to %s: %v", host, err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("client spoke %s to ramjetd, want HTTP/2", resp.Proto)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the gRPC answer from %s: %v", host, err)
	}
	return resp, body
}

// checkGRPCOK checks a successful echo call: message, trailers, and that the
// backend got HTTP/2 with te: trailers.
func checkGRPCOK(t *testing.T, resp *http.Response, body, msg []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/grpc" {
		t.Fatalf("got %d %q %q, want 200 application/grpc", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	got, err := grpcParse(body)
	if err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	if want := append([]byte("echo: "), msg...); !bytes.Equal(got, want) {
		t.Fatalf("message: got %s, want %s", abbrev(got), abbrev(want))
	}
	if got := resp.Trailer.Get("Grpc-Status"); got != "0" {
		t.Errorf("trailer Grpc-Status: got %q, want \"0\" (trailers %v, headers %v)", got, resp.Trailer, resp.Header)
	}
	if got := resp.Trailer.Get("Grpc-Message"); got != "ok" {
		t.Errorf("trailer Grpc-Message: got %q, want \"ok\" (trailers %v)", got, resp.Trailer)
	}
	if got := resp.Header.Get("Grpc-Status"); got != "" {
		t.Errorf("Grpc-Status came as a header (%q), want it only as a trailer", got)
	}
	if got := resp.Header.Get("X-Backend-Proto"); got != "HTTP/2.0" {
		t.Errorf("backend received %q, want HTTP/2.0", got)
	}
	if got := resp.Header.Get("X-Backend-Te"); got != "trailers" {
		t.Errorf("backend received TE %q, want trailers", got)
	}
}

var streamGRPCConfig = baseConfig + `
tenants:
  rpc:
    applications:
` + oneRouteApp("cleartext", "grpc.test", "h2c") + oneRouteApp("http1", "grpc-h1.test", "plain") + `
    pools:
      h2c: {scheme: h2c, members: ["{{.H2C}}"]}
      plain: {members: ["{{.Plain}}"]}
`

// TestGRPCOverH2C proves a gRPC unary call passes through ramjetd to an h2c
// member with its message and trailers, and that a gRPC call to a route
// whose pool speaks HTTP/1.1 is refused with 502, an explanation and
// grpc-status 14 without reaching the member.
func TestGRPCOverH2C(t *testing.T) {
	h2c := startStreamServer(t, &http.Server{
		Handler:   http.HandlerFunc(grpcEchoHandler),
		Protocols: streamProtocols(false, false, true),
	}, nil)
	plain := startBackend(t, grpcEchoHandler)
	td := startDaemon(t, streamGRPCConfig, map[string]any{"H2C": h2c.addr, "Plain": plain.addr})
	c := h2Client(t)

	calls := []struct {
		name          string
		msg           []byte
		unknownLength bool
	}{
		{"small message", []byte("hello"), false},
		{"80 KiB message", bytes.Repeat([]byte{0, 1, 2, 0xff}, 20<<10), false},
		{"message without content-length", []byte("streamed hello"), true},
		{"80 KiB message without content-length", bytes.Repeat([]byte{0xff, 0, 1, 2}, 20<<10), true},
	}
	for _, tc := range calls {
		t.Run("unary call with trailers, "+tc.name, func(t *testing.T) {
			resp, body := grpcCall(t, c, td, "grpc.test", tc.msg, tc.unknownLength)
			checkGRPCOK(t, resp, body, tc.msg)
		})
	}

	t.Run("gRPC to an HTTP/1.1 pool is 502", func(t *testing.T) {
		resp, body := grpcCall(t, c, td, "grpc-h1.test", []byte("hello"), false)
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "backend-protocol") {
			t.Fatalf("got %d %q, want 502 with a body mentioning backend-protocol", resp.StatusCode, body)
		}
		if got := resp.Header.Get("Grpc-Status"); got != "14" {
			t.Errorf("Grpc-Status: got %q, want \"14\"", got)
		}
		if n := plain.requests.Load(); n != 0 {
			t.Errorf("the HTTP/1.1 member received %d requests, want 0", n)
		}
	})
}

var streamGRPCTLSConfig = baseConfig + `
tenants:
  rpc:
    applications:
` + oneRouteApp("secure", "grpcs.test", "h2tls") + `
    pools:
      h2tls: {scheme: h2, tls: {ca_file: "{{.CA}}"}, members: ["{{.H2}}"]}
`

// TestGRPCOverTLSH2 proves a gRPC unary call passes through ramjetd to a
// member that serves HTTP/2 over TLS with a certificate from a private CA.
func TestGRPCOverTLSH2(t *testing.T) {
	ca := newCA(t, "gRPC test CA")
	certPEM, keyPEM := ca.issue(t, "127.0.0.1")
	caFile := writeFile(t, t.TempDir(), "ca.pem", ca.pem)
	be := startStreamServer(t, &http.Server{
		Handler:   http.HandlerFunc(grpcEchoHandler),
		Protocols: streamProtocols(false, true, false),
	}, streamTLSConfig(t, certPEM, keyPEM, "h2"))
	td := startDaemon(t, streamGRPCTLSConfig, map[string]any{"CA": caFile, "H2": be.addr})
	c := h2Client(t)
	msg := []byte("over TLS")
	resp, body := grpcCall(t, c, td, "grpcs.test", msg, true)
	checkGRPCOK(t, resp, body, msg)
}

// ---------------------------------------------------------------------------
// 5. Verification of HTTPS members.

var streamVerifyConfig = baseConfig + `
tenants:
  tls:
    applications:
` + oneRouteApp("ca1", "ca1.test", "ca1") +
	oneRouteApp("ca2", "ca2.test", "ca2") +
	oneRouteApp("system", "system.test", "system") +
	oneRouteApp("wrongname", "wrongname.test", "wrongname") +
	oneRouteApp("named", "named.test", "named") + `
    pools:
      ca1: {scheme: https, tls: {ca_file: "{{.CA1}}"}, members: ["{{.IP}}"]}
      ca2: {scheme: https, tls: {ca_file: "{{.CA2}}"}, members: ["{{.IP}}"]}
      system: {scheme: https, members: ["{{.IP}}"]}
      wrongname: {scheme: https, tls: {server_name: other.test, ca_file: "{{.CA1}}"}, members: ["{{.IP}}"]}
      named: {scheme: https, tls: {server_name: backend.test, ca_file: "{{.CA1}}"}, members: ["{{.Named}}"]}
`

// TestHTTPSMemberVerification proves that ramjetd verifies the certificate
// of https members against the pool's CA (or the system roots) and name,
// and that a member it does not trust never receives the request.
func TestHTTPSMemberVerification(t *testing.T) {
	ca1, ca2 := newCA(t, "CA one"), newCA(t, "CA two")
	dir := t.TempDir()
	ca1File, ca2File := writeFile(t, dir, "ca1.pem", ca1.pem), writeFile(t, dir, "ca2.pem", ca2.pem)
	ipCert, ipKey := ca1.issue(t, "127.0.0.1")
	nameCert, nameKey := ca1.issue(t, "backend.test")
	newHTTPS := func(name string, certPEM, keyPEM []byte) *backend {
		return startStreamServer(t, &http.Server{
			Handler:   echo(name),
			Protocols: streamProtocols(true, false, false),
		}, streamTLSConfig(t, certPEM, keyPEM, "http/1.1"))
	}
	ipBackend := newHTTPS("ip", ipCert, ipKey)
	namedBackend := newHTTPS("named", nameCert, nameKey)
	td := startDaemon(t, streamVerifyConfig, map[string]any{
		"CA1": ca1File, "CA2": ca2File, "IP": ipBackend.addr, "Named": namedBackend.addr,
	})

	cases := []struct {
		name, host string
		be         *backend
		status     int
		body       string // prefix of the body
	}{
		{"CA that issued the certificate", "ca1.test", ipBackend, 200, "ip GET /check 0"},
		{"another CA", "ca2.test", ipBackend, 502, "Bad Gateway: the backend could not be reached"},
		{"system roots", "system.test", ipBackend, 502, "Bad Gateway: the backend could not be reached"},
		{"server_name the certificate does not cover", "wrongname.test", ipBackend, 502, "Bad Gateway: the backend could not be reached"},
		{"server_name the certificate covers", "named.test", namedBackend, 200, "named GET /check 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requests, conns := tc.be.requests.Load(), tc.be.conns.Load()
			status, body, _ := rawGet(t, td.bound.get("http"), tc.host, "/check")
			if status != tc.status || !strings.HasPrefix(body, tc.body) {
				t.Fatalf("got %d %q, want %d %q...", status, body, tc.status, tc.body)
			}
			gotRequests := tc.be.requests.Load() - requests
			if tc.status == 200 {
				if gotRequests != 1 {
					t.Fatalf("the member received %d requests, want 1", gotRequests)
				}
				return
			}
			// The 502 must come from a refused handshake: the member saw
			// a connection but no request.
			if tc.be.conns.Load() == conns {
				t.Fatalf("the member saw no connection: the 502 is not a verification failure")
			}
			if gotRequests != 0 {
				t.Fatalf("the member received %d requests, want 0", gotRequests)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 6. Large bodies.

var streamBodiesConfig = baseConfig + `
tenants:
  bulk:
    applications:
` + oneRouteApp("files", "files.test", "files") + `
    pools:
      files: {members: ["{{.Backend}}"]}
`

// abbrev describes bytes for a failure message: quoted when short, by
// length, start and digest when long.
func abbrev(b []byte) string {
	if len(b) <= 64 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%d bytes %q... sha256 %.16s", len(b), b[:32], sha256Hex(b))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestLargeBodies proves that large request and response bodies, of known
// and of unknown length, pass through ramjetd byte for byte.
func TestLargeBodies(t *testing.T) {
	blob := make([]byte, 10<<20)
	rand.Read(blob)
	be := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/upload":
			h := sha256.New()
			n, err := io.Copy(h, r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("X-Length", strconv.FormatInt(r.ContentLength, 10))
			fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
		case "/download":
			size, err := strconv.Atoi(r.URL.Query().Get("size"))
			if err != nil || size < 0 || size > len(blob) {
				http.Error(w, "bad size", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.Itoa(size))
			w.Write(blob[:size])
		default:
			http.NotFound(w, r)
		}
	})
	td := startDaemon(t, streamBodiesConfig, map[string]any{"Backend": be.addr})

	for _, listener := range []string{"http", "https"} {
		c := streamClientFor(t, listener)
		uploads := []struct {
			name    string
			size    int
			chunked bool
		}{
			{"100 KiB request body", 100 << 10, false},
			{"300 KiB chunked request body", 300 << 10, true},
		}
		for _, tc := range uploads {
			t.Run(tc.name+" over "+listener, func(t *testing.T) {
				want := blob[:tc.size]
				var body io.Reader = bytes.NewReader(want)
				if tc.chunked {
					pr, pw := io.Pipe()
					go func() {
						for off := 0; off < len(want); off += 7 << 10 {
							if _, err := pw.Write(want[off:min(off+7<<10, len(want))]); err != nil {
								return
							}
						}
						pw.Close()
					}()
					defer pr.Close()
					body = pr
				}
				req, err := http.NewRequest(http.MethodPost, td.url(listener)+"/upload", body)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = "files.test"
				if tc.chunked {
					req.ContentLength = -1
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				wantProto(t, listener, resp)
				got, _ := io.ReadAll(resp.Body)
				if wantBody := fmt.Sprintf("%d %s", len(want), sha256Hex(want)); resp.StatusCode != 200 || string(got) != wantBody {
					t.Fatalf("backend received: got %d %q, want 200 %q", resp.StatusCode, got, wantBody)
				}
				if !tc.chunked {
					if got, want := resp.Header.Get("X-Length"), strconv.Itoa(tc.size); got != want {
						t.Errorf("backend's Content-Length: got %s, want %s", got, want)
					}
				}
			})
		}
		for _, size := range []int{100 << 10, 10 << 20} {
			t.Run(fmt.Sprintf("%d KiB response body over %s", size>>10, listener), func(t *testing.T) {
				req, err := http.NewRequest(http.MethodGet, td.url(listener)+"/download?size="+strconv.Itoa(size), nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = "files.test"
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				wantProto(t, listener, resp)
				got, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("reading the body after %d bytes: %v", len(got), err)
				}
				if resp.StatusCode != 200 || len(got) != size || sha256Hex(got) != sha256Hex(blob[:size]) {
					t.Fatalf("got %d, %d bytes sha256 %s, want 200, %d bytes sha256 %s",
						resp.StatusCode, len(got), sha256Hex(got), size, sha256Hex(blob[:size]))
				}
				if resp.ContentLength != int64(size) {
					t.Errorf("Content-Length: got %d, want %d", resp.ContentLength, size)
				}
			})
		}
	}
}

// ---------------------------------------------------------------------------
// 7. Trailers over HTTP/1.1.

var streamTrailersConfig = baseConfig + `
tenants:
  bulk:
    applications:
` + oneRouteApp("sums", "sums.test", "sums") + `
    pools:
      sums: {members: ["{{.Backend}}"]}
`

// TestTrailersHTTP1 proves that trailers of a chunked response reach an
// HTTP/1.1 client through ramjetd: declared ones, and undeclared ones sent
// with http.TrailerPrefix.
func TestTrailersHTTP1(t *testing.T) {
	content := bytes.Repeat([]byte("trailer test body\n"), 1000)
	sum := sha256Hex(content)
	be := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Checksum")
		w.Header().Set("Content-Type", "text/plain")
		w.Write(content[:len(content)/2])
		w.(http.Flusher).Flush() // chunked, whatever the size
		w.Write(content[len(content)/2:])
		w.Header().Set("X-Checksum", sum)
		if r.URL.Path == "/undeclared" {
			w.Header().Set(http.TrailerPrefix+"X-Undeclared", "late")
		}
	})
	td := startDaemon(t, streamTrailersConfig, map[string]any{"Backend": be.addr})
	c := streamClientFor(t, "http")

	cases := []struct {
		name, path string
		want       map[string]string
	}{
		{"declared trailer", "/declared", map[string]string{"X-Checksum": sum}},
		{"declared and undeclared trailers", "/undeclared", map[string]string{"X-Checksum": sum, "X-Undeclared": "late"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, td.url("http")+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = "sums.test"
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			wantProto(t, "http", resp)
			if !slices.Contains(resp.TransferEncoding, "chunked") {
				t.Errorf("Transfer-Encoding: got %q, want chunked", resp.TransferEncoding)
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || !bytes.Equal(got, content) {
				t.Fatalf("got %d %s, want 200 %s", resp.StatusCode, abbrev(got), abbrev(content))
			}
			for name, want := range tc.want {
				if got := resp.Trailer.Get(name); got != want {
					t.Errorf("trailer %s: got %q, want %q (trailers %v, headers %v)", name, got, want, resp.Trailer, resp.Header)
				}
			}
			if got := resp.Header.Get("X-Checksum"); got != "" {
				t.Errorf("X-Checksum came as a header (%q), want it only as a trailer", got)
			}
		})
	}
}

// TestShutdownWaitsForWebSockets checks that an open WebSocket may go on
// during the shutdown timeout (http.Server.Shutdown does not know about it)
// and is closed when the timeout ends.
func TestShutdownWaitsForWebSockets(t *testing.T) {
	be := startBackend(t, wsEchoHandler)
	td := startDaemon(t, streamWSConfig, map[string]any{"Backend": be.addr})
	td.opts.DrainDelay = 0
	td.opts.ShutdownTimeout = time.Second
	c := wsDial(t, td, "http", "/chat")
	c.echo(t, 0x1, []byte("before"))
	stopped := make(chan time.Time, 1)
	start := time.Now()
	go func() {
		td.Shutdown()
		stopped <- time.Now()
	}()
	time.Sleep(300 * time.Millisecond)
	c.echo(t, 0x1, []byte("during the shutdown timeout"))
	select {
	case end := <-stopped:
		if elapsed := end.Sub(start); elapsed < 900*time.Millisecond {
			t.Errorf("shutdown ended after %v with a WebSocket open, want the 1s timeout", elapsed)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not end")
	}
	if td.conns.Len() != 0 {
		t.Errorf("%d upgraded connections left after shutdown", td.conns.Len())
	}
}
