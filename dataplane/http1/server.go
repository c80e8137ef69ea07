package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves HTTP/1.1 connections for an http.Server, taking from it the
// requests it spends most of its time on: a simple request (see
// parseSimple: no body, no upgrade, nothing unusual) is parsed in place on
// the connection's goroutine, handled, and answered with one write. At the
// first request that is not simple, the connection goes to the http.Server,
// with the bytes read so far, and stays there: bodies, upgrades,
// 100-continue, malformed or oversized heads and their error answers are
// net/http's, as they always were.
//
// Serve the http.Server on Listener(ln). Handler, timeouts and
// ConnContext should be the http.Server's.
type Server struct {
	Handler http.Handler
	// ReadHeaderTimeout bounds the wait for a connection's first request
	// head, and for the rest of a head once its first bytes arrived.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a kept-alive
	// connection.
	IdleTimeout time.Duration
	// MaxHeaderBytes is the largest head Server takes; larger ones go to
	// net/http, which refuses them.
	MaxHeaderBytes int
	// ConnContext, if not nil, derives the context of a connection's
	// requests, as http.Server.ConnContext.
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// Serves, if not nil, reports whether Server takes a new connection;
	// the others go to the http.Server whole (HTTP/2 connections, say).
	Serves   func(c net.Conn) bool
	ErrorLog *log.Logger

	mu            sync.Mutex
	conns         map[*serverConn]struct{}
	listeners     []*handoffListener
	keepAlivesOff atomic.Bool
	shuttingDown  atomic.Bool
}

// Connection states, for Shutdown.
const (
	stateNew    int32 = iota // waiting for its first request
	stateIdle                // waiting for another request
	stateActive              // reading or serving a request
	stateClosed              // closed by Shutdown or Close
)

// watchAfter is how long a request runs before Server starts watching its
// connection for the client going away (which cancels the request's
// context). Shorter requests never pay for the watch.
const watchAfter = 100 * time.Millisecond

// Listener returns the listener to serve the http.Server on: it accepts
// from inner, serves the connections Server takes, and returns the others,
// and those Server hands over, to the http.Server.
func (s *Server) Listener(inner net.Listener) net.Listener {
	l := &handoffListener{inner: inner, srv: s, conns: make(chan accepted), done: make(chan struct{})}
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	go l.acceptLoop()
	return l
}

// SetKeepAlivesEnabled(false) makes every answer close its connection and
// closes idle connections, as http.Server's does.
func (s *Server) SetKeepAlivesEnabled(v bool) {
	s.keepAlivesOff.Store(!v)
	if !v {
		s.closeIdle(false)
	}
}

func (s *Server) keepAlives() bool { return !s.keepAlivesOff.Load() && !s.shuttingDown.Load() }

// Shutdown closes idle connections until every connection Server serves
// has ended, or ctx has; connections serving a request close after its
// answer.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shuttingDown.Store(true)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.closeIdle(true) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Close closes every connection Server serves.
func (s *Server) Close() {
	s.shuttingDown.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc := range s.conns {
		sc.state.Store(stateClosed)
		sc.conn.Close()
	}
}

// newConnGrace is how long Shutdown leaves a connection whose first
// request has not arrived, as net/http does.
const newConnGrace = 5 * time.Second

// closeIdle closes idle connections (and, when shuttingDown, connections
// still waiting for their first request after newConnGrace), and returns
// how many connections are left.
func (s *Server) closeIdle(shuttingDown bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc := range s.conns {
		if sc.state.CompareAndSwap(stateIdle, stateClosed) ||
			shuttingDown && time.Since(sc.start) > newConnGrace && sc.state.CompareAndSwap(stateNew, stateClosed) {
			sc.conn.Close()
		}
	}
	return len(s.conns)
}

func (s *Server) track(sc *serverConn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.shuttingDown.Load() {
			return false
		}
		if s.conns == nil {
			s.conns = map[*serverConn]struct{}{}
		}
		s.conns[sc] = struct{}{}
	} else {
		delete(s.conns, sc)
	}
	return true
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// handOver gives c to the http.Server, through the listener it came from.
func (s *Server) handOver(l *handoffListener, c net.Conn) {
	select {
	case l.conns <- accepted{conn: c}:
	case <-l.done:
		c.Close()
	}
}

// handoffListener is the http.Server's listener: what Server does not serve.
type handoffListener struct {
	inner net.Listener
	srv   *Server
	conns chan accepted
	done  chan struct{}
	once  sync.Once
}

type accepted struct {
	conn net.Conn
	err  error
}

func (l *handoffListener) acceptLoop() {
	for {
		c, err := l.inner.Accept()
		if err != nil {
			select {
			case l.conns <- accepted{err: err}:
			case <-l.done:
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if l.srv.Serves != nil && !l.srv.Serves(c) {
			l.srv.handOver(l, c)
			continue
		}
		go l.srv.serve(l, c)
	}
}

// Accept returns the next connection for the http.Server.
func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case a := <-l.conns:
		return a.conn, a.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close closes inner; connections Server hands over afterwards are closed.
func (l *handoffListener) Close() error {
	err := net.ErrClosed
	l.once.Do(func() {
		close(l.done)
		err = l.inner.Close()
	})
	return err
}

// Addr is inner's address.
func (l *handoffListener) Addr() net.Addr { return l.inner.Addr() }

// Unreader is a connection that can take back bytes read from it, to be
// read again by whoever reads next (listener.Guard is one). Server hands
// such connections over as they are, so that their type stays what the
// http.Server's ConnContext expects; others are wrapped.
type Unreader interface {
	net.Conn
	Unread(p []byte)
}

// serverConn is one connection Server serves.
type serverConn struct {
	srv      *Server
	from     *handoffListener
	conn     net.Conn
	start    time.Time
	state    atomic.Int32
	src      connReader
	br       *bufio.Reader
	out      connWriter
	bw       *bufio.Writer // writes to out
	res      *response
	template *http.Request   // remote address and TLS state of its requests
	ctx      context.Context // the values of its requests' contexts
	current  *requestContext // the context of the request being served
	watch    watcher
}

// serve serves c until it closes or goes to the http.Server.
func (s *Server) serve(from *handoffListener, c net.Conn) {
	sc := &serverConn{srv: s, from: from, conn: c, start: time.Now()}
	if !s.track(sc, true) {
		c.Close()
		return
	}
	defer s.track(sc, false)
	sc.src.conn = c
	sc.br = bufio.NewReaderSize(&sc.src, 4<<10)
	sc.out.conn = c
	sc.bw = bufio.NewWriterSize(&sc.out, 4<<10)
	sc.res = newResponse(sc)
	sc.watch.sc = sc
	sc.watch.done = make(chan struct{}, 1)
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, c.LocalAddr())
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, c)
	}
	sc.ctx = ctx
	sc.template = &http.Request{RemoteAddr: c.RemoteAddr().String(), TLS: tlsState(c)}
	if sc.run() {
		return // handed over
	}
	sc.bw.Flush()
	c.Close()
}

// tlsState returns the TLS state of c, as net/http finds it.
func tlsState(c net.Conn) *tls.ConnectionState {
	if cs, ok := c.(interface{ ConnectionState() tls.ConnectionState }); ok {
		st := cs.ConnectionState()
		return &st
	}
	return nil
}

// run serves requests until the connection is to be closed (false) or was
// handed over (true).
func (sc *serverConn) run() (handedOver bool) {
	if d := sc.srv.ReadHeaderTimeout; d > 0 {
		sc.conn.SetReadDeadline(sc.start.Add(d))
	}
	afterPOST := false
	for first := true; ; first = false {
		if !sc.nextHead(first) {
			return false
		}
		if afterPOST {
			// As net/http: up to 4 CR or LF bytes after a POST are
			// passed over (RFC 9112 §2.2, for old clients).
			peek, _ := sc.br.Peek(min(4, sc.br.Buffered()))
			sc.br.Discard(leadingCRorLF(peek))
		}
		h, ok := parseSimple(sc.buffered())
		if ok && (sc.srv.MaxHeaderBytes <= 0 || h.size <= sc.srv.MaxHeaderBytes) {
			// As net/http's, a request's context ends when the
			// handler returns, or before if the client goes away.
			ctx := newRequestContext(sc.ctx)
			if req, err := newRequest(sc.template, ctx, &h); err == nil {
				sc.br.Discard(h.size)
				afterPOST = req.Method == http.MethodPost
				if !sc.serveRequest(req, ctx) {
					return false
				}
				continue
			}
		}
		sc.handOver()
		return true
	}
}

func leadingCRorLF(b []byte) int {
	n := 0
	for n < len(b) && (b[n] == '\r' || b[n] == '\n') {
		n++
	}
	return n
}

// nextHead waits for a request head: until it is whole in the buffer, or
// the buffer is full, or a line ends in a bare LF, or the client ended its
// side after part of a head (the three are net/http's to judge). False
// closes the connection.
func (sc *serverConn) nextHead(first bool) bool {
	if !first {
		if !sc.state.CompareAndSwap(stateActive, stateIdle) {
			return false
		}
		if sc.br.Buffered() == 0 {
			sc.setReadTimeout(sc.srv.IdleTimeout)
		}
	}
	if _, err := sc.br.Peek(1); err != nil {
		return false
	}
	if !sc.state.CompareAndSwap(stateNew, stateActive) && !sc.state.CompareAndSwap(stateIdle, stateActive) {
		return false // closed by Shutdown meanwhile
	}
	deadlineSet := first
	for scanned := 0; !headEnds(sc.buffered(), scanned); {
		if sc.br.Buffered() == sc.br.Size() {
			return true
		}
		if !deadlineSet {
			sc.setReadTimeout(sc.srv.ReadHeaderTimeout)
			deadlineSet = true
		}
		scanned = max(sc.br.Buffered()-3, 0)
		if _, err := sc.br.Peek(sc.br.Buffered() + 1); err != nil {
			// Part of a head and then the end: net/http answers 400.
			return errors.Is(err, io.EOF)
		}
	}
	return true
}

// setReadTimeout sets the read deadline d from now, or none for d <= 0.
func (sc *serverConn) setReadTimeout(d time.Duration) {
	if d > 0 {
		sc.conn.SetReadDeadline(time.Now().Add(d))
	} else {
		sc.conn.SetReadDeadline(time.Time{})
	}
}

// headEnds reports whether buf, from index from on, holds the end of a
// head (CRLF CRLF), or a bare LF, which the fast path does not take.
func headEnds(buf []byte, from int) bool {
	for i := from; i < len(buf); i++ {
		if buf[i] != '\n' {
			continue
		}
		if i == 0 || buf[i-1] != '\r' {
			return true
		}
		if i >= 3 && buf[i-2] == '\n' && buf[i-3] == '\r' {
			return true
		}
	}
	return false
}

func (sc *serverConn) buffered() []byte {
	b, _ := sc.br.Peek(sc.br.Buffered())
	return b
}

// serveRequest runs the handler, ends the request's context (ctx) and
// then the response, as net/http does; false closes the connection.
func (sc *serverConn) serveRequest(req *http.Request, ctx *requestContext) bool {
	w := sc.res
	w.reset(req)
	sc.current = ctx
	sc.watch.arm()
	ok := sc.handle(w, req)
	clientGone := sc.watch.disarm()
	ctx.cancel()
	sc.current = nil
	if !ok {
		if !w.headDone {
			// net/http sends nothing of a head that was not
			// finished; the connection closes.
			sc.bw.Reset(&sc.out)
		}
		return false
	}
	if err := w.finish(); err != nil || w.closeAfter || clientGone {
		return false
	}
	return true
}

// handle runs the handler, recovering from a panic as net/http does: the
// connection is closed, and a panic other than http.ErrAbortHandler is
// logged with its stack.
func (sc *serverConn) handle(w *response, req *http.Request) (ok bool) {
	defer func() {
		if err := recover(); err != nil {
			if err != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				sc.srv.logf("http1: panic serving %v: %v\n%s", req.RemoteAddr, err, buf)
			}
			ok = false
		}
	}()
	sc.srv.Handler.ServeHTTP(w, req)
	return true
}

// handOver gives the connection, with every byte read from it that was not
// served, to the http.Server.
func (sc *serverConn) handOver() {
	sc.conn.SetReadDeadline(time.Time{})
	pending := append([]byte(nil), sc.buffered()...)
	if sc.src.hasPending {
		pending = append(pending, sc.src.pending)
	}
	c := sc.conn
	if u, ok := c.(Unreader); ok {
		u.Unread(pending)
	} else {
		c = &prefixConn{Conn: c, prefix: pending}
	}
	sc.srv.handOver(sc.from, c)
}

// prefixConn reads prefix before the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// connReader reads the connection for the request reader, after the byte
// the watch may have read.
type connReader struct {
	conn       net.Conn
	pending    byte
	hasPending bool
}

func (r *connReader) Read(p []byte) (int, error) {
	if r.hasPending && len(p) > 0 {
		p[0] = r.pending
		r.hasPending = false
		return 1, nil
	}
	return r.conn.Read(p)
}
