// Package listener accepts the data plane's client connections and watches
// the framing of HTTP/1.x requests on them.
//
// Ramjet refuses requests whose framing is ambiguous (Content-Length together
// with Transfer-Encoding, several differing Content-Length values, a
// Transfer-Encoding other than chunked or in an HTTP/1.0 request, obsolete
// line folding), because a front proxy that reads such a request differently
// from Ramjet could smuggle a second request past it. net/http accepts some
// of these: given both Content-Length and Transfer-Encoding it silently drops
// Content-Length, and a handler cannot tell that it happened. A Guard
// therefore sits below the server, follows the raw bytes of each HTTP/1.x
// connection, and gives the handler a verdict for each request. HTTP/2 has no
// such ambiguity; its connections are not watched.
//
// Plain and TLS return listeners whose connections are Guards (TLS returns
// HTTP/2 connections unwrapped). Serve them with an http.Server whose
// ConnContext is ConnContext, and in the handler:
//
//	if err := listener.FromContext(r.Context()).Verdict(); err != nil {
//		// answer 400 with Connection: close
//	}
package listener

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// defaultMaxHead is the head limit of net/http's default server:
// DefaultMaxHeaderBytes plus the 4096 bytes it reads beyond it.
const defaultMaxHead = 1<<20 + 4096

// Guard is a net.Conn that passes an HTTP/1.x request stream through
// unchanged while following where each request begins and ends, and keeps a
// verdict on the framing of each request for Verdict.
//
// A Guard also applies the connection's Limits: the send timeout on every
// write, and the lingering close after an answer sent before the request's
// body was read (LingerOnClose).
type Guard struct {
	conn   net.Conn
	tls    *tls.ConnectionState
	t      tracker
	asked  atomic.Uint64 // Verdict calls so far
	unread []byte        // given back by Unread, read before the connection
	lim    Limits

	send         sendDeadline
	sendTimedOut atomic.Bool
	linger       atomic.Bool // set by LingerOnClose
}

// NewGuard wraps c, which must carry plaintext HTTP/1.x (a TCP connection or
// a TLS connection after its handshake), and applies lim to it.
func NewGuard(c net.Conn, lim Limits) *Guard {
	if lim.MaxHeadBytes <= 0 {
		lim.MaxHeadBytes = defaultMaxHead
	}
	g := &Guard{conn: c, lim: lim}
	g.t.max = lim.MaxHeadBytes
	g.send.start(lim.SendTimeout, c.SetWriteDeadline)
	return g
}

// Read reads from the wrapped connection and follows the bytes read.
func (g *Guard) Read(p []byte) (int, error) {
	if len(g.unread) > 0 {
		n := copy(p, g.unread)
		g.unread = g.unread[n:]
		return n, nil
	}
	n, err := g.conn.Read(p)
	g.t.feed(p[:n])
	return n, err
}

// Unread gives back p, bytes read from g that their reader did not use:
// the next reads return them before reading the connection. They were
// followed already and are not followed again. A server that reads the
// first requests of a connection and then hands it to another (package
// http1 to net/http) gives back what it read ahead.
func (g *Guard) Unread(p []byte) {
	g.unread = append(p[:len(p):len(p)], g.unread...)
}

// Verdict returns nil when the next request on the connection has
// unambiguous framing (or is not followed: after a CONNECT or Upgrade
// request), else an error wrapping ErrAmbiguousFraming that names the
// problem. Requests after one whose end the guard could not find (a head
// over the limit, malformed chunked coding) are refused too.
//
// The handler calls Verdict exactly once for every request it is given, in
// order, before routing or any other answer (the guard does not count
// OPTIONS *, which net/http answers itself); after an error it answers with
// the connection closed. Verdict of a nil Guard (HTTP/2) is nil.
func (g *Guard) Verdict() error {
	if g == nil {
		return nil
	}
	return g.t.verdict(g.asked.Add(1) - 1)
}

// TLS returns the state of the TLS handshake, or nil for a plain connection.
func (g *Guard) TLS() *tls.ConnectionState {
	return g.tls
}

// Write writes to the wrapped connection within the send timeout.
func (g *Guard) Write(p []byte) (int, error) {
	g.send.arm()
	n, err := g.conn.Write(p)
	g.sent(err)
	return n, err
}

// WriteBuffers writes v to the wrapped connection within the send timeout,
// with one writev system call where it is a TCP connection (net.Buffers).
func (g *Guard) WriteBuffers(v *net.Buffers) (int64, error) {
	g.send.arm()
	n, err := v.WriteTo(g.conn)
	g.sent(err)
	return n, err
}

// Close closes the wrapped connection, lingering first when LingerOnClose
// asked for it. Only the first Close lingers: another one, from a server's
// shutdown, say, closes the connection at once and so ends the linger.
func (g *Guard) Close() error {
	if g.linger.CompareAndSwap(true, false) && g.lim.Linger.Time > 0 {
		return g.lingeringClose()
	}
	return g.conn.Close()
}

// CloseWrite shuts down the writing side of the wrapped connection if it can
// (TCP and TLS connections can); net/http calls it before closing a
// connection it refused a request on.
func (g *Guard) CloseWrite() error {
	if c, ok := g.conn.(interface{ CloseWrite() error }); ok {
		return c.CloseWrite()
	}
	return errors.New("listener: connection cannot close its writing side")
}

// LocalAddr returns the local address of the wrapped connection.
func (g *Guard) LocalAddr() net.Addr {
	return g.conn.LocalAddr()
}

// RemoteAddr returns the remote address of the wrapped connection.
func (g *Guard) RemoteAddr() net.Addr {
	return g.conn.RemoteAddr()
}

// SetDeadline sets the read and write deadlines of the wrapped connection;
// the next write sets the send timeout's deadline again.
func (g *Guard) SetDeadline(t time.Time) error {
	g.send.reset()
	return g.conn.SetDeadline(t)
}

// SetReadDeadline sets the read deadline of the wrapped connection.
func (g *Guard) SetReadDeadline(t time.Time) error {
	return g.conn.SetReadDeadline(t)
}

// SetWriteDeadline sets the write deadline of the wrapped connection; the
// next write sets the send timeout's deadline again (net/http clears the
// deadline after each request).
func (g *Guard) SetWriteDeadline(t time.Time) error {
	g.send.reset()
	return g.conn.SetWriteDeadline(t)
}

// tlsGuard is a Guard over TLS. Its ConnectionState method makes net/http
// fill Request.TLS, as it does for a *tls.Conn.
type tlsGuard struct{ *Guard }

// ConnectionState returns the state of the TLS handshake.
func (c tlsGuard) ConnectionState() tls.ConnectionState {
	return *c.tls
}

type contextKey struct{}

// ConnContext is for http.Server.ConnContext: when c is a connection from
// Plain or TLS, it returns ctx carrying its Guard for FromContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	switch c := c.(type) {
	case *Guard:
		return context.WithValue(ctx, contextKey{}, c)
	case tlsGuard:
		return context.WithValue(ctx, contextKey{}, c.Guard)
	}
	return ctx
}

// CarriesHTTP1 reports whether c, a connection from Plain or TLS, carries
// HTTP/1.x (it is a Guard); TLS returns HTTP/2 connections unwrapped.
func CarriesHTTP1(c net.Conn) bool {
	switch c.(type) {
	case *Guard, tlsGuard:
		return true
	}
	return false
}

// FromContext returns the Guard of the request's connection, or nil when
// there is none (HTTP/2, or a server without ConnContext).
func FromContext(ctx context.Context) *Guard {
	g, _ := ctx.Value(contextKey{}).(*Guard)
	return g
}
