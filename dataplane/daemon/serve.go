package daemon

import (
	"io"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/listener"
	"github.com/ramjet-dev/ramjet/dataplane/metrics"
	"github.com/ramjet-dev/ramjet/dataplane/router"
)

// entry is the http.Handler of one listener: it reads the serving
// generation once, routes the request and runs the route's chain.
type entry struct {
	d    *Daemon
	tls  bool
	port string
}

func (e *entry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g := listener.FromContext(r.Context()); g != nil {
		if err := g.Verdict(); err != nil {
			w.Header().Set("Connection", "close")
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	if r.Method == http.MethodConnect {
		w.Header().Set("Connection", "close")
		http.Error(w, "Method Not Allowed: ramjetd is not a forward proxy", http.StatusMethodNotAllowed)
		return
	}
	path, err := router.NormalizePath(requestPath(r))
	if err != nil {
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	gen := e.d.current.Load()
	rt, captures, err := gen.table.Lookup(router.NormalizeHost(r.Host), path, r.Header)
	if err != nil {
		rt = e.d.lookupFailure(err)
	}
	x := e.d.exchanges.Get().(*exchange.Request)
	e.fill(x, gen, r, path, captures)
	rec := e.d.recorders.Get().(*recorder)
	rec.ResponseWriter = w
	// An HTTP/1.1 upgrade that does not switch protocols closes the
	// connection after the answer: the framing guard stopped following the
	// stream at the upgrade, so nothing more may be read from it.
	rec.closeUnlessSwitched = r.ProtoMajor == 1 && isUpgrade(r.Header)
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		r.Body = &timedBody{body: r.Body, rc: http.NewResponseController(w), timeout: gen.bodyTimeout}
	}
	start := time.Now()
	e.d.metrics.InFlight.Inc()
	defer e.finish(rt, x, rec, start)
	rt.handler.Serve(rec, x)
}

// finish accounts for a request, also one that ended in a panic (an aborted
// response), and returns the per-request objects to their pools.
func (e *entry) finish(rt *route, x *exchange.Request, rec *recorder, start time.Time) {
	e.d.metrics.InFlight.Dec()
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	rt.app.requests[metrics.ClassIndex(status)].Inc()
	if e.d.current.Load().config.Server.AccessLog {
		e.d.log.Info("request", "method", x.HTTP.Method, "host", x.HTTP.Host, "path", x.HTTP.URL.Path,
			"status", status, "bytes", rec.written, "duration", time.Since(start),
			"client", x.ClientIP, "tenant", rt.app.tenant, "application", rt.app.name)
	}
	x.Reset()
	e.d.exchanges.Put(x)
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

// timedBody bounds the wait for each read of a request body, as nginx's
// client_body_timeout: a client that announces a body and trickles it (or
// sends nothing) holds a request only that long.
type timedBody struct {
	body    io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
}

func (b *timedBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	n, err := b.body.Read(p)
	if err != nil {
		// The body is over: net/http's own read of the connection (which
		// notices a client going away while the answer streams) must not
		// inherit the deadline, or a long answer would be cut.
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *timedBody) Close() error {
	b.rc.SetReadDeadline(time.Time{})
	return b.body.Close()
}

// recorder is the ResponseWriter handlers see: it remembers the status and
// the bytes written, and lets http.ResponseController reach the server's
// writer (flushes, hijacking).
type recorder struct {
	http.ResponseWriter
	status              int
	written             int64
	closeUnlessSwitched bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
		if r.closeUnlessSwitched {
			r.Header().Set("Connection", "close")
		}
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(p)
	r.written += int64(n)
	return n, err
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
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the server's ResponseWriter.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// lookupFailure returns the route answering a request the table could not
// route.
func (d *Daemon) lookupFailure(err error) *route {
	switch err {
	case router.ErrPathTooLong:
		return d.pathTooLong
	case router.ErrValueTooLong:
		return d.valueTooLong
	}
	return d.unknownHost
}
