// Package proxy is the action that forwards a request to a pool member and
// streams the answer back: keep-alive pools per member, HTTPS and HTTP/2
// (h2c and TLS) to members, streaming with flushes, trailers, WebSocket and
// other upgrades, hop-by-hop headers stripped both ways, X-Forwarded-*
// headers, and retries on other members while nothing was sent to the
// client.
//
// Retries follow one rule (DECISIONS.md): a request is tried again, on a
// member it has not tried, only while nothing has been sent to the client,
// and then only after a failed connect (any method), or for GET, HEAD,
// OPTIONS, PUT and DELETE after a 502, 503 or 504, a timeout, or a
// connection broken before the response head. A request with a body is
// retried after reaching a member only when the body was small enough to be
// kept (ReplayBodyLimit); a streamed body is retried only after a failed
// connect; a POST that reached a member is never sent again. A route's
// retry policy (Route.Retry, the Gateway API's HTTPRouteRetry) changes
// the statuses, the number of tries and the wait between them, and lets
// tries go back to members already tried once all have been; what may be
// sent again stays as above. Its Failures (nginx's proxy_next_upstream)
// narrow the failures tried again to those listed, and Within bounds the
// time during which retries may start.
//
// A route may rewrite the Location, Refresh and Set-Cookie headers of the
// answers (rewrite.go), and buffer request or response bodies in memory
// within a process-wide budget (buffering.go).
//
// A route may also bound the whole request and each try (Route's
// timeouts), and copy its requests to mirror pools (mirror.go).
package proxy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// ReplayBodyLimit is the largest request body kept in memory so that an
// idempotent request can be sent again after its body reached a failing
// member.
const ReplayBodyLimit = 64 << 10

// maxTries bounds the tries of one request whatever the pool says.
const maxTries = 11

// Target is one choice of a proxy action with its weight: a pool, or an
// Answer.
type Target struct {
	Pool   *upstream.Pool
	Weight uint32
	// Answer, when set, answers the requests of this choice instead of a
	// pool (a fixed error status); Pool is nil then.
	Answer exchange.Handler
	// Transport replaces the pool's, for a route with its own timeouts
	// (upstream.State.Variant). Nil uses the pool's.
	Transport *upstream.Transport
}

// Handler forwards requests to one pool, or to one of several chosen at
// random by weight. It is built once per configuration.
type Handler struct {
	targets []Target
	total   uint64
	route   Route
	buffers *BufferPool
	conns   *ConnTracker
	mirrors *MirrorLimit
	budget  *BufferBudget
	log     *slog.Logger
}

// Route is what a route adds to its forwarding. The zero value adds
// nothing.
type Route struct {
	// RequestTimeout bounds the whole forwarding, every try and the answer
	// to its end: past it the answer is 504 while nothing was sent, and the
	// connection is cut otherwise. Zero sets no bound.
	RequestTimeout time.Duration
	// TryTimeout bounds each try, from sending the request to the end of
	// its answer; a try past it fails as a timeout. Zero sets no bound.
	TryTimeout time.Duration
	// Mirrors receive copies of the requests.
	Mirrors []Mirror
	// Retry replaces the pool's retries; nil keeps them.
	Retry *Retry
	// Rewrite changes headers of the members' answers; nil changes none.
	Rewrite *ResponseRewrite
	// BufferRequest, when positive, reads request bodies whole up to this
	// many bytes before the first try (config.Buffering.Request).
	BufferRequest int64
	// BufferResponse, when positive, reads members' answers whole up to
	// this many bytes before sending them (config.Buffering.Response).
	BufferResponse int64
	// Sticky sends a request whose affinity cookie a target's pool set to
	// that target before any weight is drawn, targets of weight 0
	// included (config.Action.Sticky).
	Sticky bool
	// ErrorPages replaces some answers by an error backend's and names
	// the pool serving the route while its own has no members
	// (errorpages.go); nil changes nothing.
	ErrorPages *ErrorPages
}

// Retry is a route's retry policy (config.Retry): which answers are tried
// again, how many more tries, and the wait before each. Its tries may go
// to members already tried once every member has been.
type Retry struct {
	// Codes are the statuses tried again; empty means 502, 503 and 504.
	Codes []int
	// Attempts is the tries after the first; negative keeps the pool's
	// retries.
	Attempts int
	// Backoff is the wait before the first retry, doubled after each up
	// to 10 times itself.
	Backoff time.Duration
	// Failures, when set, are the failures other than answers tried again
	// (and Codes every status tried again, none when empty); nil tries
	// every failure again.
	Failures *Failures
	// Within, when positive, is the time after the start of the first try
	// during which retries may start.
	Within time.Duration
}

// Failures are nginx's proxy_next_upstream conditions other than
// statuses (config.RetryFailures).
type Failures struct {
	Error, Timeout, InvalidHeader bool
}

// wait returns the wait before retry n (1 for the first).
func (r *Retry) wait(n int) time.Duration {
	d := r.Backoff
	for i := 1; i < n && d < 10*r.Backoff; i++ {
		d *= 2
	}
	return min(d, 10*r.Backoff)
}

// Options are the process-wide parts a Handler uses. Zero fields get
// defaults: a private buffer pool, no connection tracking, a private
// mirror limit of DefaultMirrorsInFlight, slog's default logger.
type Options struct {
	Buffers *BufferPool
	// Conns tracks hijacked (upgraded) connections so that shutdown can
	// close them.
	Conns *ConnTracker
	// Mirrors bounds the mirrored requests in flight.
	Mirrors *MirrorLimit
	// Budget bounds the memory of buffered bodies; nil gives the Handler
	// its own of BufferedBytesLimit.
	Budget *BufferBudget
	Log    *slog.Logger
}

// New returns a Handler for the targets. Targets with weight 0 receive
// nothing; at least one must have a positive weight (configuration
// validation guarantees it).
func New(targets []Target, route Route, opts Options) *Handler {
	h := &Handler{targets: targets, route: route, buffers: opts.Buffers, conns: opts.Conns, mirrors: opts.Mirrors, budget: opts.Budget, log: opts.Log}
	for i := range h.targets {
		if h.targets[i].Transport == nil && h.targets[i].Pool != nil {
			h.targets[i].Transport = h.targets[i].Pool.Transport
		}
	}
	if h.buffers == nil {
		h.buffers = NewBufferPool()
	}
	if h.mirrors == nil {
		h.mirrors = NewMirrorLimit(DefaultMirrorsInFlight)
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.budget == nil {
		h.budget = NewBufferBudget(BufferedBytesLimit)
	}
	for _, t := range targets {
		h.total += uint64(t.Weight)
	}
	return h
}

var _ exchange.Handler = (*Handler)(nil)

// Serve forwards the request and streams the response.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	t := h.stickyTarget(x)
	if t == nil {
		t = h.pickTarget()
	}
	if t.Answer != nil {
		t.Answer.Serve(w, x)
		return
	}
	if isGRPC(x.HTTP) && !t.Pool.Scheme.IsHTTP2() {
		writeError(w, x.HTTP, errGRPCToHTTP1)
		return
	}
	f := &forwarding{h: h, pool: t.Pool, transport: t.Transport, w: w, x: x}
	f.run()
}

func (h *Handler) pickTarget() *Target {
	if len(h.targets) == 1 {
		return &h.targets[0]
	}
	n := rand.Uint64N(h.total)
	for i := range h.targets {
		if n < uint64(h.targets[i].Weight) {
			return &h.targets[i]
		}
		n -= uint64(h.targets[i].Weight)
	}
	return &h.targets[len(h.targets)-1]
}

// isGRPC reports whether a request is gRPC: content type application/grpc
// or application/grpc+<codec>, but not gRPC-Web, which works over HTTP/1.1.
func isGRPC(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if media, _, found := strings.Cut(ct, ";"); found {
		ct = strings.TrimSpace(media)
	}
	return ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+")
}

// forwarding is the state of one request's tries.
type forwarding struct {
	h         *Handler
	pool      *upstream.Pool
	transport *upstream.Transport
	w         http.ResponseWriter
	x         *exchange.Request

	// ctx is the context of the tries: the request's, or one ending at
	// the route's request timeout.
	ctx context.Context
	// endTry ends the context of the try being made, when the route
	// bounds tries; nil otherwise.
	endTry context.CancelFunc

	set       *balancer.Set
	out       *http.Request
	first     http.Request // the first try's out, with its URL: no allocation of their own
	firstURL  url.URL
	body      *requestBody
	key       uint64
	setCookie string
	tried     [maxTries]int
	ntried    int
	started   time.Time // the start of the first try, under a retry policy's Within
	reserved  int64     // bytes of the buffer budget held
	fallback  bool      // the route's fallback pool serves the request
}

func (f *forwarding) run() {
	r := f.x.HTTP
	f.ctx = r.Context()
	if d := f.h.route.RequestTimeout; d > 0 {
		var cancel context.CancelFunc
		f.ctx, cancel = context.WithTimeout(f.ctx, d)
		defer cancel()
	}
	defer f.release()
	f.useFallback()
	if err := f.prepare(); err != nil {
		f.fail(err)
		return
	}
	f.mirror()
	// One member set for all tries: indices of tried members stay valid
	// even when the members are replaced meanwhile.
	f.set = f.pool.Members()
	tries := min(f.retries()+1, maxTries)
	var lastErr error = errNoMembers
	defer f.finishTry()
	for try := 0; try < tries; try++ {
		if err := f.backoff(try); err != nil {
			if err == errClientGone {
				exchange.RecordStatus(f.w, statusClientClosed)
				return
			}
			lastErr = err
			break
		}
		m := f.pick()
		if m == nil {
			break
		}
		if try > 0 {
			f.pool.Stats.Retries.Add(1)
			f.resetForRetry()
		} else if r := f.h.route.Retry; r != nil && r.Within > 0 {
			f.started = time.Now()
		}
		f.startTry()
		resp, err := f.roundTrip(m)
		if err == nil {
			if !f.retryStatus(resp.StatusCode) {
				f.answer(m, resp)
				return
			}
			m.Stats.Failures.Add(1)
			if try+1 == tries || !f.anotherMember() || !f.canRetry(nil) || !f.inRetryTime() {
				f.answer(m, resp)
				return
			}
			discard(resp)
			m.Stats.InFlight.Add(-1)
			f.finishTry()
			continue
		}
		m.Stats.InFlight.Add(-1)
		f.finishTry()
		if bodyErr := f.body.err(); bodyErr != nil {
			// The client's body failed (too large, too slow): the
			// client's fault, answered as such; net/http may already
			// have canceled the request's context because of it.
			lastErr = bodyErr
			break
		}
		if r.Context().Err() != nil {
			exchange.RecordStatus(f.w, statusClientClosed)
			return
		}
		if f.ctx.Err() != nil {
			// The route's request timeout: no try may start.
			lastErr = errRequestTimeout
			break
		}
		m.Stats.Failures.Add(1)
		lastErr = err
		if !f.canRetry(err) || !f.failureRetried(err) || !f.inRetryTime() {
			break
		}
	}
	f.h.log.Debug("proxy: no response from the pool", "pool", f.pool.Name, "tries", f.ntried, "error", lastErr)
	f.fail(lastErr)
}

// prepare builds the outgoing request once for all tries.
func (f *forwarding) prepare() error {
	r := f.x.HTTP
	prepareRequestHeaders(f.x)
	if f.fallback {
		f.fallbackHeaders()
	}
	body, err := f.readBody()
	if err != nil {
		return err
	}
	f.body = body
	f.first = *r
	if f.ctx != r.Context() {
		f.first = *r.WithContext(f.ctx)
	}
	out := &f.first
	f.setTargetURL(&f.firstURL)
	out.URL = &f.firstURL
	out.RequestURI = ""
	out.Close = false
	out.Host = r.Host
	if f.x.ForwardHost != "" {
		out.Host = f.x.ForwardHost
	}
	out.Body, out.GetBody, out.ContentLength = body.forRequest(r.ContentLength)
	if body.replay != nil {
		out.TransferEncoding = nil // a buffered chunked body goes with its length
	}
	f.out = out
	f.key, f.setCookie = hashKey(f.pool, f.x)
	return nil
}

// setTargetURL sets u to the member's URL but its host: the path as the
// client sent it, or the rewritten one (see target.go), and the query as
// the client sent it.
func (f *forwarding) setTargetURL(u *url.URL) {
	*u = url.URL{Scheme: "http", RawQuery: f.x.HTTP.URL.RawQuery}
	if f.pool.Scheme.UsesTLS() {
		u.Scheme = "https"
	}
	if f.x.ForwardPath != "" {
		u.Path = f.x.ForwardPath
		u.RawPath = escapePath(u.Path)
		return
	}
	u.Path, u.RawPath = f.x.HTTP.URL.Path, f.x.HTTP.URL.RawPath
	if verbatimPath(u.RawPath) {
		u.Opaque = u.RawPath
	}
}

// resetForRetry gives the next try its own request and URL: the transport
// may still hold the previous ones.
func (f *forwarding) resetForRetry() {
	out := f.out.WithContext(f.ctx)
	u := *f.out.URL
	out.URL = &u
	if f.out.GetBody != nil {
		out.Body, _ = f.out.GetBody()
	}
	f.out = out
}

// startTry gives the try its own context when the route bounds tries.
func (f *forwarding) startTry() {
	if d := f.h.route.TryTimeout; d > 0 {
		var ctx context.Context
		ctx, f.endTry = context.WithTimeout(f.ctx, d)
		f.out = f.out.WithContext(ctx)
	}
}

// finishTry ends the context of the last try, once its answer is no
// longer read.
func (f *forwarding) finishTry() {
	if f.endTry != nil {
		f.endTry()
		f.endTry = nil
	}
}

// retries is how many more tries a request may make: the route's, or the
// pool's.
func (f *forwarding) retries() int {
	if r := f.h.route.Retry; r != nil && r.Attempts >= 0 {
		return r.Attempts
	}
	return f.pool.Retries
}

// errClientGone ends a backoff the client did not wait for.
var errClientGone = errors.New("the client went away")

// backoff waits before retry n (none before the first try, n = 0) as the
// route's retry policy says, within
// the request's timeout: it fails with errClientGone or errRequestTimeout
// when the wait is cut.
func (f *forwarding) backoff(n int) error {
	r := f.h.route.Retry
	if n == 0 || r == nil || r.Backoff <= 0 {
		return nil
	}
	t := time.NewTimer(r.wait(n))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-f.ctx.Done():
		if f.x.HTTP.Context().Err() != nil {
			return errClientGone
		}
		return errRequestTimeout
	}
}

// pick chooses an untried member, counting it in flight; nil when none is
// left. Under a route's retry policy, once every member has been tried
// any may be picked again.
func (f *forwarding) pick() *balancer.Member {
	tried := f.tried[:f.ntried]
	if f.h.route.Retry != nil && f.ntried >= f.set.Len() {
		tried = nil
	}
	i := f.pickMember(tried)
	if i < 0 {
		return nil
	}
	f.tried[f.ntried] = i
	f.ntried++
	m := f.set.Member(i)
	m.Stats.InFlight.Add(1)
	m.Stats.Requests.Add(1)
	return m
}

func (f *forwarding) roundTrip(m *balancer.Member) (*http.Response, error) {
	f.out.URL.Host = m.Address
	start := time.Now()
	resp, err := f.transport.RoundTrip(f.out)
	if err == nil && !validFieldNames(resp.Header) {
		// Closed before its end, the body closes the connection.
		resp.Body.Close()
		resp, err = nil, errBadHead
	}
	if err == nil && f.pool.Latency != nil {
		f.pool.Latency.Observe(time.Since(start).Seconds())
	}
	return resp, err
}

// anotherMember reports whether the pool has a member this request may
// try next: one not tried yet, or under a route's retry policy any.
func (f *forwarding) anotherMember() bool {
	if f.h.route.Retry != nil {
		return f.set.Len() > 0
	}
	return f.ntried < f.set.Len()
}

// canRetry applies the retry rule to the error of the last try (nil for a
// 502, 503 or 504 answer).
func (f *forwarding) canRetry(err error) bool {
	if f.body.err() != nil || errors.Is(err, context.Canceled) {
		return false
	}
	if err != nil && upstream.IsDialError(err) {
		// Nothing reached the member, not even a byte of a streamed body.
		return !f.body.sentAndLost()
	}
	if f.body.streamed != nil {
		// The member got the head and may be reading the body (or the
		// transport still is): a streamed body cannot be sent again.
		return false
	}
	return idempotent(f.x.HTTP.Method)
}

// retryStatus reports whether an answer's status is tried again: the
// route's codes, or 502, 503 and 504.
func (f *forwarding) retryStatus(code int) bool {
	if r := f.h.route.Retry; r != nil && (len(r.Codes) > 0 || r.Failures != nil) {
		return slices.Contains(r.Codes, code)
	}
	return code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

// failureRetried reports whether the route's retry policy tries a failure
// again: every one without Failures, else those of its kinds.
func (f *forwarding) failureRetried(err error) bool {
	r := f.h.route.Retry
	if r == nil || r.Failures == nil {
		return true
	}
	switch failureKind(err) {
	case kindTimeout:
		return r.Failures.Timeout
	case kindInvalidHeader:
		return r.Failures.InvalidHeader
	}
	return r.Failures.Error
}

// inRetryTime reports whether a retry may still start under the route's
// Within.
func (f *forwarding) inRetryTime() bool {
	r := f.h.route.Retry
	return r == nil || r.Within <= 0 || time.Since(f.started) < r.Within
}

// The kinds of failures of nginx's proxy_next_upstream.
const (
	kindError = iota
	kindTimeout
	kindInvalidHeader
)

// failureKind sorts a try's error: a timeout (connecting, sending, waiting
// for the head), a malformed or too large head, or else an error.
func failureKind(err error) int {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return kindTimeout
	case errors.Is(err, errBadHead):
		return kindInvalidHeader
	}
	// The transports' errors for a head they could not parse or that was
	// too large have no type of their own.
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "headers exceeded") || strings.Contains(msg, "head is too large") {
		return kindInvalidHeader
	}
	return kindError
}

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// discard drains a little of a response we will not use, so its connection
// can be reused, and closes it.
func discard(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}

// respond streams the member's response to the client.
func (f *forwarding) respond(m *balancer.Member, resp *http.Response) {
	inFlight := true
	defer func() {
		if inFlight {
			m.Stats.InFlight.Add(-1)
		}
	}()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		f.upgrade(resp)
		return
	}
	defer resp.Body.Close()
	var buffered []byte
	whole := false
	if f.h.route.BufferResponse > 0 && bufferable(resp) {
		var err error
		if buffered, whole, err = f.bufferAnswer(resp); err != nil {
			// Nothing was sent to the client: it gets an error answer.
			m.Stats.Failures.Add(1)
			writeError(f.w, f.x.HTTP, err)
			return
		}
		if whole {
			// The member is done with: free it before the client is.
			resp.Body.Close()
			m.Stats.InFlight.Add(-1)
			inFlight = false
		}
	}
	announced := len(resp.Trailer)
	header := f.w.Header()
	copyResponseHeaders(header, resp.Header, resp.Trailer)
	if rw := f.h.route.Rewrite; rw != nil {
		rw.apply(header)
	}
	if f.setCookie != "" {
		header.Add("Set-Cookie", f.setCookie)
	}
	if whole {
		setLength(header, resp, len(buffered))
	}
	f.w.WriteHeader(resp.StatusCode)
	if len(buffered) > 0 {
		if _, err := f.w.Write(buffered); err != nil {
			return // the client went away
		}
	}
	if whole {
		copyTrailers(header, resp.Trailer, announced)
		return
	}
	if err := f.copyBody(resp); err != nil {
		// The client has a status line already; cut the connection so
		// that a truncated body cannot pass for a complete one.
		m.Stats.Failures.Add(1)
		panic(http.ErrAbortHandler)
	}
	copyTrailers(header, resp.Trailer, announced)
}

// copyBody copies the response body with a pooled buffer, flushing the
// head and then every write for streams (unknown length, server-sent
// events, gRPC).
func (f *forwarding) copyBody(resp *http.Response) error {
	flush := resp.ContentLength < 0 || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	var flusher http.Flusher
	if flush {
		flusher, _ = f.w.(http.Flusher)
	}
	if flusher != nil {
		// A stream's head goes out before its first bytes: a member of a
		// bidirectional stream may answer only after the client, which
		// may wait for the head, sends more.
		flusher.Flush()
	}
	buf := f.h.buffers.Get()
	defer f.h.buffers.Put(buf)
	for {
		n, rerr := resp.Body.Read(*buf)
		if n > 0 {
			if _, werr := f.w.Write((*buf)[:n]); werr != nil {
				return nil // the client went away; nothing to tell it
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			if f.x.HTTP.Context().Err() != nil {
				return nil
			}
			return rerr
		}
	}
}

// statusClientClosed is nginx's code for a client that went away before
// the answer; it is only recorded (exchange.RecordStatus), never sent.
const statusClientClosed = 499
