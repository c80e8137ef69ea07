package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/tcpconn"
)

// Client sends eligible requests (see Eligible) over kept-alive HTTP/1.1
// connections. Its fields are set before first use and not changed after.
// Its methods are safe for concurrent use.
type Client struct {
	// Dial opens a connection to a member address (host:port), TLS
	// handshake included for an https member.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ResponseHeaderTimeout bounds the wait for the response head after the
	// request was written; 0 waits as long as the request's context.
	ResponseHeaderTimeout time.Duration
	// MaxIdlePerHost is the number of idle connections kept per member.
	MaxIdlePerHost int
	// IdleTimeout closes connections idle for longer.
	IdleTimeout time.Duration
	// MaxResponseHeaderBytes bounds a response head (1xx heads included);
	// 0 means net/http's default, 10 MiB.
	MaxResponseHeaderBytes int64

	hosts   sync.Map // member address → *host
	closed  atomic.Bool
	sweeper sync.Once
	done    chan struct{}
	closeMu sync.Mutex // orders Close with the sweeper's start
}

// host holds the idle connections of one member address.
type host struct {
	idle    chan *conn
	retired atomic.Bool // dropped from Client.hosts: its connections are closed, not kept
}

// Eligible reports whether Client can send req: no body, no trailers, no
// upgrade or Expect, not asked to close, and an idempotent method (RFC 9110
// §9.2.2), which Client sends again when a kept-alive connection turns out
// to have been closed by the member before answering. (net/http does the
// same for GET, HEAD, OPTIONS and TRACE; for DELETE only when nothing was
// written.)
func Eligible(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody || req.ContentLength != 0 || len(req.Trailer) > 0 || req.Close {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodDelete, http.MethodTrace:
	default:
		return false
	}
	if _, ok := req.Header["Upgrade"]; ok {
		return false
	}
	_, expect := req.Header["Expect"]
	return !expect
}

// RoundTrip sends an eligible request to req.URL.Host and returns the
// response, whose body must be read to its end or closed. A connection the
// member closed while it was idle is replaced and the request sent again.
func (c *Client) RoundTrip(req *http.Request) (*http.Response, error) {
	if !Eligible(req) {
		return nil, errNotEligible
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, err // as net/http: nothing is sent for a request already canceled
	}
	addr := req.URL.Host
	for {
		cn, reused, err := c.conn(ctx, addr)
		if err != nil {
			return nil, err
		}
		if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: cn.Conn, Reused: reused, WasIdle: reused})
		}
		resp, err := cn.exchange(ctx, req, reused)
		if err == nil {
			return resp, nil
		}
		cn.Close()
		if !reused || !errors.Is(err, errClosedIdle) || ctx.Err() != nil {
			return nil, err
		}
	}
}

var errNotEligible = errors.New("http1: request not eligible for the HTTP/1.1 fast path")

// conn returns an idle connection to addr, or a new one.
func (c *Client) conn(ctx context.Context, addr string) (cn *conn, reused bool, err error) {
	if h, ok := c.hosts.Load(addr); ok {
		if cn := c.takeIdle(h.(*host)); cn != nil {
			return cn, true, nil
		}
	}
	nc, err := c.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	return newConn(c, addr, nc), false, nil
}

// takeIdle returns the oldest idle connection of h that has not timed out,
// nil when there is none.
func (c *Client) takeIdle(h *host) *conn {
	for {
		select {
		case cn := <-h.idle:
			if time.Since(cn.idleSince) < c.IdleTimeout && cn.idle.usable() {
				return cn
			}
			cn.Close()
		default:
			return nil
		}
	}
}

// putIdle keeps cn for the next request to its member, or closes it when
// the member's idle list is full or the client closed.
func (c *Client) putIdle(cn *conn) {
	if c.closed.Load() {
		cn.Close()
		return
	}
	h := c.host(cn.addr)
	cn.idleSince = time.Now()
	select {
	case h.idle <- cn:
	default:
		cn.Close()
		return
	}
	if h.retired.Load() || c.closed.Load() {
		// Lost a race with the sweeper or Close, which
		// may have emptied h already.
		drain(h)
	}
}

func (c *Client) host(addr string) *host {
	if h, ok := c.hosts.Load(addr); ok {
		return h.(*host)
	}
	h, loaded := c.hosts.LoadOrStore(addr, &host{idle: make(chan *conn, c.MaxIdlePerHost)})
	if !loaded {
		c.startSweeper()
	}
	return h.(*host)
}

// Close releases the client: idle connections are closed at once,
// connections in use when their response ends, and none is kept after.
func (c *Client) Close() {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed.Swap(true) {
		return
	}
	if c.done != nil {
		close(c.done)
	}
	c.hosts.Range(func(_, h any) bool {
		drain(h.(*host))
		return true
	})
}

func drain(h *host) {
	for {
		select {
		case cn := <-h.idle:
			cn.Close()
		default:
			return
		}
	}
}

// startSweeper starts, once, the goroutine that closes connections idle
// for longer than IdleTimeout and forgets members without connections.
func (c *Client) startSweeper() {
	c.sweeper.Do(func() {
		c.closeMu.Lock()
		defer c.closeMu.Unlock()
		if c.closed.Load() {
			return
		}
		c.done = make(chan struct{})
		go c.sweep(c.done, max(c.IdleTimeout/3, time.Second))
	})
}

func (c *Client) sweep(done <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			c.sweepOnce()
		}
	}
}

// sweepOnce closes expired idle connections and retires hosts that had
// none left.
func (c *Client) sweepOnce() {
	c.hosts.Range(func(addr, v any) bool {
		h := v.(*host)
		for range len(h.idle) {
			select {
			case cn := <-h.idle:
				if time.Since(cn.idleSince) >= c.IdleTimeout || !cn.idle.usable() {
					cn.Close()
					continue
				}
				select {
				case h.idle <- cn:
				default:
					cn.Close()
				}
			default:
			}
		}
		if len(h.idle) == 0 {
			c.hosts.Delete(addr)
			h.retired.Store(true)
			drain(h)
		}
		return true
	})
}

// conn is one kept-alive connection to a member.
type conn struct {
	net.Conn
	client    *Client
	addr      string
	src       headLimiter
	br        *bufio.Reader
	sink      requestSink
	bw        *bufio.Writer
	idle      *idleCheck
	isTLS     bool
	idleSince time.Time
	canceled  atomic.Bool // the request's context ended: the connection is dead

	// The watch of the exchange's context (see watch): one of them.
	watched   *requestContext
	stopWatch func() bool
}

func newConn(c *Client, addr string, nc net.Conn) *conn {
	nc = tcpconn.Wrap(nc)
	cn := &conn{Conn: nc, client: c, addr: addr, idle: newIdleCheck(nc)}
	_, cn.isTLS = nc.(*tls.Conn)
	cn.src = headLimiter{r: nc, n: -1}
	cn.br = bufio.NewReaderSize(&cn.src, 4<<10)
	cn.sink.conn = nc
	if tc, ok := nc.(*tcpconn.Conn); ok {
		cn.sink.waiter = tc
	}
	cn.bw = bufio.NewWriterSize(&cn.sink, 4<<10)
	return cn
}

// requestSink is the writer under a connection's bufio.Writer. A request
// written in one piece waits for the answer in the same call to the poller
// (tcpconn.Conn.WriteThenWait), where the connection is plain TCP: the
// head's read then takes one system call, not a first one that finds
// nothing.
type requestSink struct {
	conn   net.Conn
	waiter answerWaiter // nil when conn is not plain TCP
	pieces int          // writes of the request so far
	whole  bool         // the next write is the whole request, to a waiter
}

func (s *requestSink) Write(p []byte) (int, error) {
	if s.whole {
		s.whole = false
		return s.waiter.WriteThenWait(p)
	}
	s.pieces++
	return s.conn.Write(p)
}

// answerWaiter is a connection whose write can wait for the answer
// (tcpconn.Conn).
type answerWaiter interface {
	WriteThenWait(p []byte) (int, error)
}

// flushRequest sends what the buffer holds of a request, the end of it.
// Only a request sent in one piece waits with its write: after a first
// piece of a large head the member may have answered already (a 431, say),
// and WriteThenWait would forget that answer's readiness.
func (cn *conn) flushRequest() error {
	cn.sink.whole = cn.sink.waiter != nil && cn.sink.pieces == 0
	err := cn.bw.Flush()
	cn.sink.whole, cn.sink.pieces = false, 0
	return err
}

// headLimiter bounds what is read while n is not negative: the size of a
// response head.
type headLimiter struct {
	r io.Reader
	n int64
}

var errHeadTooLarge = errors.New("http1: the member's response head is too large")

func (l *headLimiter) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// defaultMaxResponseHeaderBytes is net/http's Transport default.
const defaultMaxResponseHeaderBytes = 10 << 20

func (c *Client) maxHead() int64 {
	if c.MaxResponseHeaderBytes > 0 {
		return c.MaxResponseHeaderBytes
	}
	return defaultMaxResponseHeaderBytes
}

// errClosedIdle is the failure of a kept-alive connection that the member
// closed before answering: the request did not reach it, or reached it as
// it was closing, and may be sent again on a new connection.
var errClosedIdle = errors.New("http1: the member closed a kept-alive connection before answering")

// exchange writes req and reads the response head.
func (cn *conn) exchange(ctx context.Context, req *http.Request, reused bool) (*http.Response, error) {
	headTimeout := cn.client.ResponseHeaderTimeout
	if headTimeout > 0 {
		// Before the watch: a deadline set after it could lift the one
		// the end of ctx sets.
		cn.SetReadDeadline(time.Now().Add(headTimeout))
	}
	cn.watch(ctx)
	err := writeRequest(cn.bw, req)
	if err == nil {
		err = cn.flushRequest()
	}
	if err != nil {
		cn.unwatch()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if isClosedConn(err) {
			return nil, errors.Join(errClosedIdle, err)
		}
		return nil, err
	}
	cn.src.n = cn.client.maxHead()
	resp, length, err := cn.readHead(req)
	cn.src.n = -1
	if err != nil {
		cn.unwatch()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if headTimeout > 0 {
		cn.SetReadDeadline(time.Time{})
		if cn.canceled.Load() {
			// The context ended meanwhile, and the deadline its
			// watcher set has just been lifted: set it again.
			cn.SetDeadline(aLongTimeAgo)
		}
	}
	reusable := !resp.Close
	switch {
	case length > 0:
		resp.Body = &body{cn: cn, reusable: reusable, remaining: length}
	case resp.Body == http.NoBody:
		cn.finish(reusable)
	default:
		resp.Body = &body{src: resp.Body, cn: cn, reusable: reusable}
	}
	return resp, nil
}

// readHead reads the response head, passing over informational (1xx)
// answers, at most maxInformational of them. A response read in place (see readResponse)
// comes without a Body and with the length of its body; one read by
// net/http with its Body and length -1.
func (cn *conn) readHead(req *http.Request) (*http.Response, int64, error) {
	if _, err := cn.br.Peek(1); err != nil {
		if isClosedConn(err) {
			return nil, 0, errors.Join(errClosedIdle, err)
		}
		return nil, 0, err
	}
	for range maxInformational + 1 {
		resp, length, err := readResponse(cn.br, req)
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, 0, errUnexpectedSwitch
		}
		if resp.StatusCode >= 200 || resp.StatusCode < 100 {
			return resp, length, nil
		}
	}
	return nil, 0, errTooManyInformational
}

// maxInformational is how many 1xx answers may precede the response
// (net/http bounds their total size instead; MaxResponseHeaderBytes does
// that here too).
const maxInformational = 5

var (
	errUnexpectedSwitch     = errors.New("http1: the member switched protocols without being asked to")
	errTooManyInformational = errors.New("http1: too many informational (1xx) answers")
)

// watch makes the end of ctx break the connection, so that a request
// whose client went away stops waiting for the member, until unwatch. The
// context of a request Server serves registers the connection without
// allocating; others go through context.AfterFunc.
func (cn *conn) watch(ctx context.Context) {
	if rc, ok := ctx.(*requestContext); ok {
		if rc.watch(cn) {
			cn.watched = rc
		} else {
			cn.breakForCancel()
		}
		return
	}
	if ctx.Done() != nil {
		cn.stopWatch = context.AfterFunc(ctx, cn.breakForCancel)
	}
}

// unwatch stops watching the exchange's context and reports whether the
// connection is still usable: false when the context's end broke it.
func (cn *conn) unwatch() bool {
	usable := true
	switch {
	case cn.watched != nil:
		usable = cn.watched.unwatch(cn)
		cn.watched = nil
	case cn.stopWatch != nil:
		usable = cn.stopWatch()
		cn.stopWatch = nil
	}
	return usable && !cn.canceled.Load()
}

// breakForCancel breaks the connection at the end of its request's
// context: what waits on it returns at once.
func (cn *conn) breakForCancel() {
	cn.canceled.Store(true)
	cn.SetDeadline(aLongTimeAgo)
}

var aLongTimeAgo = time.Unix(1, 0)

// finish ends the connection's exchange: back to the idle list when the
// response ended cleanly and the context did not break it, closed
// otherwise.
func (cn *conn) finish(reusable bool) {
	// Bytes left in the buffer were sent past the response's end: the
	// next request would read them as its answer.
	if cn.unwatch() && reusable && cn.br.Buffered() == 0 && cn.tlsHoldsNothing() {
		cn.client.putIdle(cn)
		return
	}
	cn.Close()
}

// tlsHoldsNothing reports, for a TLS connection, whether crypto/tls holds
// none of the member's output: what it read ahead of the response's end is
// neither in the buffer nor on the socket, where the idle check looks. A
// read with a deadline in the past returns what TLS holds without reading
// the socket, and its timeout does not break the connection.
func (cn *conn) tlsHoldsNothing() bool {
	if !cn.isTLS {
		return true
	}
	cn.SetReadDeadline(aLongTimeAgo)
	_, err := cn.br.Peek(1)
	cn.SetReadDeadline(time.Time{})
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// body is a response body that gives its connection back at its end.
// Like net/http's, it is read by one goroutine at a time; Close may follow
// Read but not run beside it.
type body struct {
	src       io.ReadCloser // net/http's body; nil for remaining bytes of the connection
	remaining int64
	cn        *conn
	reusable  bool
	done      bool
	err       error // what the body ended with, returned again (io.EOF for a whole one)
}

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	if b.src == nil {
		return b.readRemaining(p)
	}
	n, err := b.src.Read(p)
	if err != nil {
		b.end(err)
	}
	return n, err
}

// readRemaining reads a body of known length from the connection; its
// last bytes come with io.EOF, so that the connection is given back at
// once.
func (b *body) readRemaining(p []byte) (int, error) {
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.cn.br.Read(p)
	b.remaining -= int64(n)
	if b.remaining == 0 {
		b.end(io.EOF)
		return n, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.end(err)
	}
	return n, err
}

// Close closes the connection unless the body was read to its end: what is
// left of it would have to be read before the next response.
func (b *body) Close() error {
	if !b.done {
		b.end(http.ErrBodyReadAfterClose)
	}
	return nil
}

// end ends the body with err, which later reads return; io.EOF is a body
// read whole, whose connection may be used again.
func (b *body) end(err error) {
	b.done = true
	b.err = err
	b.cn.finish(b.reusable && err == io.EOF)
}
