package proxy

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// upgrade completes a protocol switch (WebSocket and others): it checks the
// member switched to what the client asked for, sends the 101 to the
// client, and copies bytes both ways until either side closes.
func (f *forwarding) upgrade(resp *http.Response) {
	backend, ok := resp.Body.(io.ReadWriteCloser)
	want := upgradeType(f.x.HTTP.Header)
	got := upgradeType(resp.Header)
	if !ok || want == "" || !strings.EqualFold(want, got) {
		resp.Body.Close()
		writeError(f.w, f.x.HTTP, errBadUpgrade)
		return
	}
	defer backend.Close()
	client, brw, err := http.NewResponseController(f.w).Hijack()
	if err != nil {
		writeError(f.w, f.x.HTTP, errBadUpgrade)
		return
	}
	defer client.Close()
	if f.h.conns != nil {
		defer f.h.conns.track(client)()
	}
	removeHopHeaders(resp.Header)
	delete(resp.Header, "Server")
	if token, ok := f.w.Header()["Server"]; ok {
		resp.Header["Server"] = token
	}
	resp.Header["Connection"] = []string{"Upgrade"}
	resp.Header["Upgrade"] = []string{got}
	resp.Body = nil
	if err := resp.Write(brw); err != nil {
		return
	}
	if err := brw.Flush(); err != nil {
		return
	}
	exchange.RecordStatus(f.w, http.StatusSwitchingProtocols)
	f.splice(client, brw, backend)
}

// splice copies client to backend and backend to client; when one
// direction ends, both connections close.
func (f *forwarding) splice(client net.Conn, brw io.Reader, backend io.ReadWriteCloser) {
	done := make(chan struct{}, 2)
	go func() {
		f.copyStream(backend, brw)
		done <- struct{}{}
	}()
	go func() {
		f.copyStream(client, backend)
		done <- struct{}{}
	}()
	<-done
	client.Close()
	backend.Close()
	<-done
}

func (f *forwarding) copyStream(dst io.Writer, src io.Reader) {
	buf := f.h.buffers.Get()
	defer f.h.buffers.Put(buf)
	io.CopyBuffer(dst, src, *buf)
}

// ConnTracker keeps the hijacked connections of upgraded requests, which
// http.Server.Shutdown does not know about, so that shutdown can close them.
type ConnTracker struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// NewConnTracker returns an empty tracker.
func NewConnTracker() *ConnTracker { return &ConnTracker{conns: map[net.Conn]struct{}{}} }

// Track keeps c until untrack is called, so that shutdown waits for it
// and then closes it, as it does upgraded connections (spliced TLS
// connections use it).
func (t *ConnTracker) Track(c net.Conn) (untrack func()) { return t.track(c) }

func (t *ConnTracker) track(c net.Conn) (untrack func()) {
	t.mu.Lock()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.conns, c)
		t.mu.Unlock()
	}
}

// Len returns the number of connections tracked.
func (t *ConnTracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// CloseAll closes every tracked connection and forgets it.
func (t *ConnTracker) CloseAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.Close()
		delete(t.conns, c)
	}
}
