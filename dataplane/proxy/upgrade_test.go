package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// upgradeMember answers an upgrade request by switching to the protocol
// named by its switchTo (the request's own when empty) and echoing bytes.
func upgradeMember(t *testing.T, switchTo string) string {
	return startMember(t, func(w http.ResponseWriter, r *http.Request) {
		proto := switchTo
		if proto == "" {
			proto = r.Header.Get("Upgrade")
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+proto+"\r\nX-Hop: 1\r\n\r\n")
		io.Copy(c, brw)
	})
}

// front serves h on a real loopback server, which upgrades need.
func front(t *testing.T, h *Handler) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Serve(w, exchangeFor(r))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// dialUpgrade sends an upgrade request to addr and returns the connection
// and the response head.
func dialUpgrade(t *testing.T, addr, header string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /chat HTTP/1.1\r\nHost: example.com\r\n"+header+"\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return c, br, resp
}

func TestUpgrade(t *testing.T) {
	conns := NewConnTracker()
	h := New([]Target{{Pool: buildPool(t, config.Pool{}, upgradeMember(t, "")), Weight: 1}}, Route{}, Options{Conns: conns, Log: quietLog})
	addr := front(t, h)

	c, br, resp := dialUpgrade(t, addr, "Connection: keep-alive, Upgrade\r\nUpgrade: echo/1\r\n")
	if resp.StatusCode != 101 {
		t.Fatalf("status = %d, want 101", resp.StatusCode)
	}
	if got := resp.Header.Get("Upgrade"); got != "echo/1" {
		t.Errorf("Upgrade = %q, want echo/1", got)
	}
	if got := resp.Header.Get("Connection"); got != "Upgrade" {
		t.Errorf("Connection = %q, want Upgrade", got)
	}
	if got := resp.Header.Get("X-Hop"); got != "1" {
		t.Errorf("X-Hop = %q, want the member's header passed on", got)
	}
	for _, msg := range []string{"ping", "pong pong"} {
		io.WriteString(c, msg)
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != msg {
			t.Fatalf("echo of %q = %q (%v)", msg, buf, err)
		}
	}
	if n := conns.Len(); n != 1 {
		t.Errorf("tracked connections = %d during the upgrade, want 1", n)
	}

	// Shutdown closes the spliced connection...
	conns.CloseAll()
	if _, err := br.ReadByte(); err == nil {
		t.Errorf("the client's connection still reads after CloseAll")
	}
	// ...and the splice ends, untracking it.
	deadline := time.Now().Add(2 * time.Second)
	for conns.Len() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := conns.Len(); n != 0 {
		t.Errorf("tracked connections = %d after the splice ended, want 0", n)
	}
}

func TestUpgradeRefused(t *testing.T) {
	tests := []struct {
		name       string
		member     func(t *testing.T) string
		header     string
		wantStatus int
	}{
		{name: "member switches to another protocol", member: func(t *testing.T) string { return upgradeMember(t, "other") },
			header: "Connection: Upgrade\r\nUpgrade: echo/1\r\n", wantStatus: 502},
		{name: "member switches unasked", member: func(t *testing.T) string { return upgradeMember(t, "echo/1") },
			header: "", wantStatus: 502},
		{name: "member declines the upgrade", member: func(t *testing.T) string { return statusMember(t, 426, nil) },
			header: "Connection: Upgrade\r\nUpgrade: echo/1\r\n", wantStatus: 426},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conns := NewConnTracker()
			h := New([]Target{{Pool: buildPool(t, config.Pool{}, tt.member(t)), Weight: 1}}, Route{}, Options{Conns: conns, Log: quietLog})
			_, _, resp := dialUpgrade(t, front(t, h), tt.header)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if n := conns.Len(); n != 0 {
				t.Errorf("tracked connections = %d, want 0", n)
			}
		})
	}
}

// TestUpgradeWithoutHijack checks the answer when the client's connection
// cannot be taken over (a recorder, like HTTP/2).
func TestUpgradeWithoutHijack(t *testing.T) {
	h := New([]Target{{Pool: buildPool(t, config.Pool{}, upgradeMember(t, "")), Weight: 1}}, Route{}, Options{Log: quietLog})
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "echo/1")
	w := serve(h, exchangeFor(r))
	if w.Code != 502 {
		t.Errorf("status = %d, want 502", w.Code)
	}
}

func TestConnTracker(t *testing.T) {
	tr := NewConnTracker()
	if tr.Len() != 0 {
		t.Fatalf("new tracker has %d connections, want 0", tr.Len())
	}
	var clients []net.Conn
	var untrack []func()
	for range 3 {
		server, client := net.Pipe()
		t.Cleanup(func() { client.Close(); server.Close() })
		clients = append(clients, client)
		untrack = append(untrack, tr.track(server))
	}
	if tr.Len() != 3 {
		t.Errorf("Len = %d after tracking 3, want 3", tr.Len())
	}
	untrack[1]()
	if tr.Len() != 2 {
		t.Errorf("Len = %d after untracking one, want 2", tr.Len())
	}
	untrack[1]() // twice is harmless
	if tr.Len() != 2 {
		t.Errorf("Len = %d after untracking the same one again, want 2", tr.Len())
	}
	tr.CloseAll()
	for i, c := range clients {
		wantClosed := i != 1
		wait := time.Second // a closed pipe answers at once
		if !wantClosed {
			wait = 50 * time.Millisecond
		}
		c.SetReadDeadline(time.Now().Add(wait))
		_, err := c.Read(make([]byte, 1))
		closed := err == io.EOF || (err != nil && strings.Contains(err.Error(), "closed"))
		if closed != wantClosed {
			t.Errorf("connection %d: read error %v (closed %v), want closed %v", i, err, closed, wantClosed)
		}
	}
}

func TestConnTrackerConcurrent(t *testing.T) {
	tr := NewConnTracker()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				a, b := net.Pipe()
				done := tr.track(a)
				tr.Len()
				done()
				a.Close()
				b.Close()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			tr.CloseAll()
		}
	}()
	wg.Wait()
	if tr.Len() != 0 {
		t.Errorf("Len = %d after every connection was untracked, want 0", tr.Len())
	}
}

func TestBufferPool(t *testing.T) {
	p := NewBufferPool()
	b := p.Get()
	if len(*b) != copyBufferSize {
		t.Errorf("buffer of %d bytes, want %d", len(*b), copyBufferSize)
	}
	p.Put(b)
	if b2 := p.Get(); len(*b2) != copyBufferSize {
		t.Errorf("buffer of %d bytes after Put, want %d", len(*b2), copyBufferSize)
	}
	if New([]Target{{Weight: 1}}, Route{}, Options{}).buffers == nil {
		t.Errorf("New without Buffers has no buffer pool, want a private one")
	}
	shared := NewBufferPool()
	if New([]Target{{Weight: 1}}, Route{}, Options{Buffers: shared}).buffers != shared {
		t.Errorf("New did not use the buffer pool it was given")
	}
}

func TestTargetURL(t *testing.T) {
	tests := []struct {
		name        string
		scheme      config.Scheme
		target      string
		forwardPath string
		want        string
	}{
		{name: "http", scheme: config.SchemeHTTP, target: "/a/b?x=1", want: "http:///a/b?x=1"},
		{name: "https", scheme: config.SchemeHTTPS, target: "/a", want: "https:///a"},
		{name: "h2c", scheme: config.SchemeH2C, target: "/a", want: "http:///a"},
		{name: "h2", scheme: config.SchemeH2, target: "/a", want: "https:///a"},
		{name: "raw path kept", scheme: config.SchemeHTTP, target: "/a%2Fb?q=%20", want: "http:///a%2Fb?q=%20"},
		{name: "forward path keeps the query", scheme: config.SchemeHTTP, target: "/old?q=1", forwardPath: "/new path", want: "http:///new%20path?q=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := exchangeFor(httptest.NewRequest("GET", tt.target, nil))
			x.ForwardPath = tt.forwardPath
			f := &forwarding{pool: buildPool(t, config.Pool{Scheme: tt.scheme}), x: x}
			var u url.URL
			f.setTargetURL(&u)
			if got := u.String(); got != tt.want {
				t.Errorf("setTargetURL gave %q, want %q", got, tt.want)
			}
		})
	}
}
