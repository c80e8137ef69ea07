package listener

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// plainHTTPReply answers a client that speaks plain HTTP to a TLS port.
const plainHTTPReply = "HTTP/1.0 400 Bad Request\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" +
	"This port expects TLS: use https.\n"

// TLSOptions are the settings of a listener from NewTLS.
type TLSOptions struct {
	// HandshakeTimeout bounds each handshake; zero or less means no bound.
	HandshakeTimeout time.Duration
	// Guard is the limits of the Guards (see NewGuard).
	Guard Limits
	// OnHandshakeError, if not nil, is called with the error of each failed
	// handshake (naming the client's address), from the handshake's
	// goroutine. Handshakes cut short by Close are not reported.
	OnHandshakeError func(error)
	// Passthrough, if not nil, may take connections before their
	// handshake, by the server name of their ClientHello.
	Passthrough Passthrough
}

// Passthrough takes TLS connections whose ClientHello names one of its
// hosts before the listener terminates them.
type Passthrough interface {
	// Active reports whether any host is taken now. When it is not, the
	// listener reads no ClientHello before the handshake.
	Active() bool
	// Splice takes conn, whose reads start again with the ClientHello,
	// when serverName is one of its hosts, and reports whether it did.
	// It must not block: the connection is then no longer the
	// listener's, neither for Accept nor for Close, and its deadline is
	// still the handshake's.
	Splice(serverName string, conn net.Conn) bool
}

// TLS is NewTLS with the given handshake timeout and Guard limits and no
// handshake error callback.
func TLS(inner net.Listener, cfg *tls.Config, handshakeTimeout time.Duration, lim Limits) net.Listener {
	return NewTLS(inner, cfg, TLSOptions{HandshakeTimeout: handshakeTimeout, Guard: lim})
}

// NewTLS returns a listener that completes the TLS handshake (with cfg,
// which must not change afterwards) of every connection inner accepts, each
// in its own goroutine, before Accept returns the connection. Accept returns
// the *tls.Conn itself when ALPN chose "h2" (http.Server.Serve, with a nil
// TLSConfig, then hands it to its HTTP/2 server; cfg.NextProtos must offer
// "h2") or another protocol that is not HTTP/1.x, otherwise a Guard around
// it. A client that sends plain HTTP is answered 400; other failed
// handshakes close the connection. Close closes inner and the connections
// not yet returned by Accept, which then returns net.ErrClosed.
func NewTLS(inner net.Listener, cfg *tls.Config, opts TLSOptions) net.Listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &tlsListener{inner: inner, cfg: cfg, opts: opts, ctx: ctx, cancel: cancel, ready: make(chan accepted)}
	l.wg.Go(l.acceptLoop)
	return l
}

type tlsListener struct {
	inner  net.Listener
	cfg    *tls.Config
	opts   TLSOptions
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	ready  chan accepted
	once   sync.Once
	wg     sync.WaitGroup // acceptLoop and handshakes
}

// accepted is a result for Accept.
type accepted struct {
	conn net.Conn
	err  error
}

func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case a := <-l.ready:
		if l.ctx.Err() != nil { // Close raced with the handover
			if a.conn != nil {
				a.conn.Close()
			}
			return nil, net.ErrClosed
		}
		return a.conn, a.err
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

func (l *tlsListener) Close() error {
	err := net.ErrClosed
	l.once.Do(func() {
		l.cancel()
		err = l.inner.Close()
		l.wg.Wait()
	})
	return err
}

func (l *tlsListener) Addr() net.Addr {
	return l.inner.Addr()
}

func (l *tlsListener) acceptLoop() {
	for {
		c, err := l.inner.Accept()
		if err != nil {
			// Temporary errors go to Accept too, whose caller backs off.
			if !l.deliver(accepted{err: err}) || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		l.wg.Go(func() { l.handshake(c) })
	}
}

// deliver waits for Accept to take a, or for Close, which closes a.conn.
func (l *tlsListener) deliver(a accepted) bool {
	select {
	case l.ready <- a:
		return true
	case <-l.ctx.Done():
		if a.conn != nil {
			a.conn.Close()
		}
		return false
	}
}

func (l *tlsListener) handshake(raw net.Conn) {
	if d := l.opts.HandshakeTimeout; d > 0 {
		raw.SetDeadline(time.Now().Add(d))
	}
	conn := raw
	if pt := l.opts.Passthrough; pt != nil && pt.Active() {
		var spliced bool
		if conn, spliced = l.peek(raw, pt); spliced {
			return
		}
	}
	tc := tls.Server(conn, l.cfg)
	if err := tc.HandshakeContext(l.ctx); err != nil {
		l.refuse(tc, err)
		return
	}
	raw.SetDeadline(time.Time{})
	l.deliver(accepted{conn: l.wrap(tc)})
}

// peek reads the ClientHello of raw, within the handshake's deadline, and
// offers the connection to pt when it names a server. It returns the
// connection the handshake reads instead (which replays what peek read)
// unless pt took it. A ClientHello that cannot be read, or names no
// server, goes to the handshake, which then fails or serves the default.
func (l *tlsListener) peek(raw net.Conn, pt Passthrough) (net.Conn, bool) {
	stop := context.AfterFunc(l.ctx, func() { raw.Close() })
	name, head, err := PeekServerName(raw, MaxClientHelloBytes)
	stop()
	replay := NewReplayConn(raw, head)
	if err == nil && l.ctx.Err() == nil && pt.Splice(name, replay) {
		return nil, true
	}
	return replay, false
}

// wrap returns a Guard around tc when it carries HTTP/1.x, else tc, which
// net/http hands to the server for its ALPN protocol (in TLSNextProto).
func (l *tlsListener) wrap(tc *tls.Conn) net.Conn {
	state := tc.ConnectionState()
	switch state.NegotiatedProtocol {
	case "", "http/1.1", "http/1.0":
	default:
		return tc
	}
	g := NewGuard(tc, l.opts.Guard)
	g.tls = &state
	return tlsGuard{g}
}

// refuse closes a connection whose handshake failed, first answering a
// client that sent plain HTTP (while the handshake deadline still holds).
func (l *tlsListener) refuse(tc *tls.Conn, err error) {
	var re tls.RecordHeaderError
	if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
		io.WriteString(re.Conn, plainHTTPReply)
		err = errors.New("client sent plain HTTP")
	}
	tc.Close()
	if f := l.opts.OnHandshakeError; f != nil && l.ctx.Err() == nil {
		f(fmt.Errorf("tls handshake from %s: %w", tc.RemoteAddr(), err))
	}
}

// looksLikeHTTP reports whether the first five bytes of a connection look
// like the start of an HTTP request: a method of at least three upper-case
// letters followed by a space, or five upper-case letters.
func looksLikeHTTP(hdr [5]byte) bool {
	i := 0
	for i < len(hdr) && 'A' <= hdr[i] && hdr[i] <= 'Z' {
		i++
	}
	return i == len(hdr) || i >= 3 && hdr[i] == ' '
}
