package daemon

import (
	"errors"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/listener"
	"github.com/ramjet-dev/ramjet/dataplane/metrics"
	"github.com/ramjet-dev/ramjet/dataplane/router"
)

// entry is the http.Handler of one listener: it reads the serving
// generation once, routes the request and runs the route's chain.
type entry struct {
	d *Daemon
	// listener is the name of the listener, whose routing table it uses.
	listener string
	tls      bool
	port     string
	// sendTimeout bounds each write of an HTTP/2 answer; HTTP/1.x
	// connections have it from their listener.Guard.
	sendTimeout time.Duration
}

func (e *entry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	gen := e.d.current.Load()
	if gen.config.Server.ServerTokens {
		w.Header().Set("Server", "ramjet")
	}
	rec := e.d.recorders.Get().(*recorder)
	rec.start(w, r, gen.bodyTimeout, e.sendTimeout)
	defer e.release(rec)
	e.serve(rec, r, gen)
	rec.completed = true
}

// serve answers r with the generation gen.
func (e *entry) serve(rec *recorder, r *http.Request, gen *generation) {
	if status, reason := refusal(r); status != 0 {
		// Nothing after this request can be trusted: the connection
		// closes after the answer.
		rec.guard, rec.closing = listener.FromContext(r.Context()), true
		http.Error(rec, http.StatusText(status)+": "+reason, status)
		return
	}
	path, err := cutFragment(r)
	if err == nil {
		path, err = router.NormalizePath(path)
	}
	if err != nil {
		http.Error(rec, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	table := gen.tables.of(e.listener)
	rt, captures, err := table.Lookup(router.NormalizeHost(r.Host), path, &router.Request{Method: r.Method, Header: r.Header, RawQuery: r.URL.RawQuery})
	if err != nil {
		rt = e.d.lookupFailure(err, rt)
	}
	if misdirected(table, r, rt) {
		http.Error(rec, "Misdirected Request: this connection was set up for another name; open a new one for this host", http.StatusMisdirectedRequest)
		return
	}
	x := e.d.exchanges.Get().(*exchange.Request)
	e.fill(x, gen, r, path, captures)
	// An HTTP/1.1 upgrade that does not switch protocols closes the
	// connection after the answer: the framing guard stopped following the
	// stream at the upgrade, so nothing more may be read from it.
	rec.closeUnlessSwitched = r.ProtoMajor == 1 && isUpgrade(r.Header)
	start := time.Now()
	e.d.metrics.InFlight.Inc()
	defer e.finish(rt, x, start, rec)
	rt.handler.Serve(rec, x)
}

// misdirected reports whether an HTTPS request's Host is served by an
// application of another sni_group than the application serving the
// connection's server name (both groups set).
func misdirected(table *router.Table[*route], r *http.Request, rt *route) bool {
	if r.TLS == nil || r.TLS.ServerName == "" || rt == nil || rt.app == nil || rt.app.sniGroup == "" {
		return false
	}
	sni, _, err := table.Lookup(router.NormalizeHost(r.TLS.ServerName), "/", nil)
	return err == nil && sni != nil && sni.app != nil && sni.app.sniGroup != "" && sni.app.sniGroup != rt.app.sniGroup
}

// refusal returns the status and reason of a request refused before
// routing: framing the guard found ambiguous, and CONNECT. HTTP/2 has no
// such framing: on an h2c connection (a guarded plain connection that
// net/http serves as HTTP/2) the guard's verdicts are not about its
// requests.
func refusal(r *http.Request) (int, string) {
	if g := listener.FromContext(r.Context()); g != nil && r.ProtoMajor == 1 {
		if err := g.Verdict(); err != nil {
			return http.StatusBadRequest, err.Error()
		}
	}
	if r.Method == http.MethodConnect {
		return http.StatusMethodNotAllowed, "ramjetd is not a forward proxy"
	}
	return 0, ""
}

// finish accounts for a request, also one that ended in a panic (an aborted
// response), and returns the exchange to its pool.
func (e *entry) finish(rt *route, x *exchange.Request, start time.Time, rec *recorder) {
	e.d.metrics.InFlight.Dec()
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	rt.app.requests[metrics.ClassIndex(status)].Inc()
	if !rt.noAccessLog && e.d.current.Load().config.Server.AccessLog {
		e.d.log.Info("request", "method", x.HTTP.Method, "host", x.HTTP.Host, "path", x.HTTP.URL.Path,
			"status", status, "bytes", rec.written, "duration", time.Since(start),
			"client", x.ClientIP, "tenant", rt.app.tenant, "application", rt.app.name)
	}
	x.Reset()
	e.d.exchanges.Put(x)
}

// release ends the request's part of the connection or stream (see
// recorder.settle and recorder.endWatch) and returns the recorder to its
// pool.
func (e *entry) release(rec *recorder) {
	if rec.endWatch() {
		e.d.metrics.SendTimeouts.Inc()
	}
	rec.settle()
	*rec = recorder{}
	e.d.recorders.Put(rec)
}

func (e *entry) fill(x *exchange.Request, gen *generation, r *http.Request, path string, captures []string) {
	x.HTTP = r
	x.Path = path
	x.Captures = captures
	x.TLS = e.tls
	x.Port = e.port
	x.Scheme = "http"
	if e.tls {
		x.Scheme = "https"
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		x.Peer = ap.Addr().Unmap()
	}
	x.ClientIP = x.Peer
	x.PeerTrusted = contains(gen.trusted, x.Peer)
	if !x.PeerTrusted {
		return
	}
	x.ClientIP = clientFromForwardedFor(r.Header["X-Forwarded-For"], gen.trusted, x.Peer)
	switch proto := r.Header.Get("X-Forwarded-Proto"); proto {
	case "http", "https":
		x.Scheme = proto
	}
}

func contains(prefixes []netip.Prefix, addr netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// clientFromForwardedFor returns the right-most address of X-Forwarded-For
// that is not a trusted proxy (every hop after it is one we trust), the
// left-most when all are trusted, or fallback when the header is absent.
// Entries may carry a port ("198.51.100.7:4444", "[2001:db8::1]:443"), as
// some load balancers write them. An entry that is no address at all gives
// the invalid address: the client is unknown, and access lists refuse it.
func clientFromForwardedFor(values []string, trusted []netip.Prefix, fallback netip.Addr) netip.Addr {
	client := fallback
	for i := len(values) - 1; i >= 0; i-- {
		list := values[i]
		for list != "" {
			var item string
			if j := strings.LastIndexByte(list, ','); j >= 0 {
				item, list = list[j+1:], list[:j]
			} else {
				item, list = list, ""
			}
			addr, ok := parseForwardedAddr(strings.TrimSpace(item))
			if !ok {
				return netip.Addr{}
			}
			client = addr
			if !contains(trusted, client) {
				return client
			}
		}
	}
	return client
}

// parseForwardedAddr parses an address of X-Forwarded-For, with or without
// a port.
func parseForwardedAddr(s string) (netip.Addr, bool) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// requestPath is the path of r; an absolute-form request target without a
// path ("GET http://host HTTP/1.1") asks for "/", as nginx reads it.
func requestPath(r *http.Request) string {
	if r.URL.Path == "" && r.URL.Host != "" {
		return "/"
	}
	return r.URL.Path
}

// cutFragment ends the request target at its first "#", as nginx ends $uri
// and $args there, and returns the path (see requestPath). net/http keeps
// a fragment in the path or the query (a request target has none, so it
// does not look for one): "/admin#x" would be matched as a path other
// than /admin, and forwarded with the fragment percent-encoded. r.URL
// becomes the target without its fragment, so that matching, every access
// policy, rewrites, redirects and the member see one path; r.RequestURI
// keeps the target as received (nginx's $request_uri). nginx forwards the
// fragment when no rewrite applies; ramjetd never does, so that a member
// cannot read in it a path that ramjetd did not match
// ("/public#/../admin").
func cutFragment(r *http.Request) (string, error) {
	i := strings.IndexByte(r.RequestURI, '#')
	if i < 0 {
		return requestPath(r), nil
	}
	u, err := url.ParseRequestURI(r.RequestURI[:i])
	if err != nil {
		return "", errBadTarget
	}
	r.URL = u
	return requestPath(r), nil
}

// errBadTarget answers a request target whose part before "#" is not one.
var errBadTarget = errors.New("the request target is not valid")

// isUpgrade reports whether a request asks to switch protocols, by the
// rule the framing guard uses.
func isUpgrade(h http.Header) bool {
	if len(h["Upgrade"]) == 0 || h["Upgrade"][0] == "" {
		return false
	}
	for _, line := range h["Connection"] {
		for token := range strings.SplitSeq(line, ",") {
			if strings.EqualFold(strings.TrimSpace(token), "upgrade") {
				return true
			}
		}
	}
	return false
}

// clientBody is a request body as handlers read it. Each read waits at
// most read_body_timeout (nginx's client_body_timeout): a client that
// announces a body and trickles it, or sends nothing, holds its request
// only that long. It knows whether the body was read to its end (a read
// that failed, on a timeout say, leaves the rest of it unread), and stop
// ends reading it for good.
//
// The transport that streams it to a member reads it from its own
// goroutine, and may go on after the handler has returned (a member that
// answered before reading the whole body): the ResponseController is
// then no longer the handler's to use (HTTP/2 frees the stream's writer,
// and a deadline set on an HTTP/1.x connection would bound its next
// request). end, when the handler returns, makes every later read fail
// without touching it; mu orders each use of rc with stop and end. mu is
// the request's own, uncontended but for that race.
type clientBody struct {
	body    io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	read    atomic.Bool // read to its end (io.EOF)

	mu      sync.Mutex
	stopped bool // by stop: the read deadline stays in the past
	ended   bool // by end: the handler has returned, rc is not used
}

// errBodyStopped is what reads of a body get once the answer has been sent
// without it, or the handler has returned.
var errBodyStopped = errors.New("the request was answered before its body was read")

func (b *clientBody) Read(p []byte) (int, error) {
	if !b.readDeadline(time.Now().Add(b.timeout)) {
		return 0, errBodyStopped
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.read.Store(true)
		// The body is over: net/http's own read of the connection (which
		// notices a client going away while the answer streams) must not
		// inherit the deadline, or a long answer would be cut.
		b.readDeadline(time.Time{})
	}
	return n, err
}

func (b *clientBody) Close() error {
	b.readDeadline(time.Time{})
	return b.body.Close()
}

// readDeadline sets the connection's read deadline and reports true,
// unless stop or end has ended the body.
func (b *clientBody) readDeadline(t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped || b.ended {
		return false
	}
	b.rc.SetReadDeadline(t)
	return true
}

// stop ends the body for good: reads fail, and so does the read net/http
// makes, after the handler, to discard what is left of it.
func (b *clientBody) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	if !b.ended {
		b.rc.SetReadDeadline(longAgo())
	}
}

// end runs when the handler has returned: reads fail from then on, and rc
// is not used again.
func (b *clientBody) end() {
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
}

// longAgo is a deadline in the past: reads fail at once.
func longAgo() time.Time { return time.Unix(1, 0) }

// recorder is the ResponseWriter handlers see: it remembers the status and
// the bytes written, lets http.ResponseController reach the server's writer
// (flushes, hijacking), ends the connection of an answer sent before its
// request's body was read (settle), and bounds the writes of HTTP/2 answers
// by the send timeout.
type recorder struct {
	http.ResponseWriter
	status              int
	written             int64
	closeUnlessSwitched bool

	rc   *http.ResponseController // for requests with a body, and HTTP/2
	body *clientBody              // the request's body; nil without one
	// guard is the HTTP/1.x connection's, for requests with a body or
	// refused.
	guard *listener.Guard
	// closing is set when the answer closes an HTTP/1.x connection whose
	// stream may hold more than was read: a request body nobody read to
	// its end, or anything after a refused request.
	closing bool
	// watch bounds the writes of an HTTP/2 answer by the send timeout;
	// HTTP/1.x connections have theirs from their Guard.
	watch *sendWatch
	// completed is set when the handler returned without a panic.
	completed bool
}

// start prepares the recorder for the request r answered through w. A
// request without a body over HTTP/1.x, the common case, needs nothing
// more.
func (rec *recorder) start(w http.ResponseWriter, r *http.Request, bodyTimeout, sendTimeout time.Duration) {
	rec.ResponseWriter = w
	hasBody := r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
	if !hasBody && r.ProtoMajor == 1 {
		return
	}
	rec.rc = http.NewResponseController(w)
	if hasBody {
		rec.body = &clientBody{body: r.Body, rc: rec.rc, timeout: bodyTimeout}
		r.Body = rec.body
	}
	if r.ProtoMajor == 1 {
		rec.guard = listener.FromContext(r.Context())
	} else if sendTimeout > 0 {
		rec.watch = newSendWatch(rec.rc, sendTimeout)
	}
}

func (rec *recorder) WriteHeader(code int) {
	if rec.status == 0 && code >= 200 {
		rec.status = code
		if rec.body != nil && rec.guard != nil && !rec.body.read.Load() {
			// An early answer: it goes out at once, without the
			// 100 Continue a client may be waiting for, and the
			// connection closes after it (settle).
			rec.closing = true
		}
		if rec.closing || rec.closeUnlessSwitched {
			rec.Header().Set("Connection", "close")
		}
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	if rec.watch != nil {
		rec.watch.begin()
	}
	n, err := rec.ResponseWriter.Write(p)
	if rec.watch != nil {
		rec.watch.done(err)
	}
	rec.written += int64(n)
	return n, err
}

// settle runs when the handler has returned, before net/http finishes the
// answer. After an answer that closes the connection with the stream not
// read to its end, net/http would go on reading the request body, without a
// bound, before it closes: that read is ended at once, and the Guard closes
// the connection with a lingering close instead, bounded by lingering_time
// and lingering_timeout. Whatever still reads the body (a transport
// streaming it to a member) fails from then on (clientBody.end).
func (rec *recorder) settle() {
	if rec.closing && rec.guard != nil {
		rec.guard.LingerOnClose()
		if rec.body != nil {
			rec.body.stop()
		}
	}
	if rec.body != nil {
		rec.body.end()
	}
}

// RecordStatus keeps a status that is not written: 499 for a client that
// went away, 101 for a switch written on the hijacked connection.
func (r *recorder) RecordStatus(code int) {
	if r.status == 0 {
		r.status = code
	}
}

// Flush sends buffered data to the client.
func (r *recorder) Flush() {
	if r.watch != nil {
		r.watch.begin()
		r.watch.done(r.rc.Flush())
		return
	}
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// endWatch ends the send timeout's watch of an HTTP/2 answer, and reports
// whether the timeout cut the answer. What the server still holds of a complete
// answer is flushed under the watch first: net/http would flush it after
// the handler, unbounded.
func (r *recorder) endWatch() (cut bool) {
	if r.watch == nil {
		return false
	}
	if r.completed && r.written > 0 {
		r.Flush()
	}
	return r.watch.end()
}

// Unwrap returns the server's ResponseWriter.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// lookupFailure is the route that answers a failed lookup: 404 for a host
// nobody serves, 414 or 431 for a request longer than the host's regexes
// read. The last two are counted under the host's application, whose
// default route the lookup returned (site), when it has one.
func (d *Daemon) lookupFailure(err error, site *route) *route {
	var failure *route
	switch err {
	case router.ErrPathTooLong:
		failure = d.pathTooLong
	case router.ErrValueTooLong:
		failure = d.valueTooLong
	default:
		return d.unknownHost
	}
	if site != nil {
		// Rare, and per request: a route of its own, so that the answer
		// counts for the application the host belongs to.
		return &route{handler: failure.handler, app: site.app}
	}
	return failure
}
