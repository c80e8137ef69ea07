package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// ErrorPages replaces some answers of a route by an error backend's
// (config.ErrorPages): the members' answers with a listed status, unless
// OwnAnswersOnly, and the proxy's own error answers with one. It also
// names the pool that serves the route while the route's pool has no
// members. A nil *ErrorPages changes nothing.
type ErrorPages struct {
	// Statuses are the intercepted statuses.
	Statuses StatusSet
	// OwnAnswersOnly leaves the members' answers alone.
	OwnAnswersOnly bool
	// Pool is the error backend; nil intercepts nothing. Transport is
	// its transport, nil for the pool's.
	Pool      *upstream.Pool
	Transport *upstream.Transport
	// Timeout bounds the request to the error backend, its body included.
	Timeout time.Duration
	// Fallback serves the route while its pool has no members; nil
	// answers as without. FallbackTransport is its transport.
	Fallback          *upstream.Pool
	FallbackTransport *upstream.Transport
	// Namespace, Ingress, Service and ServicePort are the values of the
	// X-Namespace, X-Ingress-Name, X-Service-Name and X-Service-Port
	// headers.
	Namespace, Ingress, Service, ServicePort string
}

// StatusSet is a set of statuses 400..599. The zero value is empty.
type StatusSet [4]uint64

// Add puts code in the set; codes outside 400..599 are left out.
func (s *StatusSet) Add(code int) {
	if i := code - 400; i >= 0 && i < 200 {
		s[i/64] |= 1 << (i % 64)
	}
}

// Has reports whether code is in the set.
func (s *StatusSet) Has(code int) bool {
	i := code - 400
	return i >= 0 && i < 200 && s[i/64]&(1<<(i%64)) != 0
}

// intercepts reports whether the error backend replaces an answer with
// this status: own tells the proxy's answers from the members'.
func (e *ErrorPages) intercepts(status int, own bool) bool {
	return e != nil && e.Pool != nil && e.Statuses.Has(status) && (own || !e.OwnAnswersOnly)
}

// useFallback switches the request to the fallback pool when the route's
// pool has no members.
func (f *forwarding) useFallback() {
	e := f.h.route.ErrorPages
	if e == nil || e.Fallback == nil || f.pool.Members().Len() > 0 {
		return
	}
	f.pool, f.transport, f.fallback = e.Fallback, e.FallbackTransport, true
	if f.transport == nil {
		f.transport = e.Fallback.Transport
	}
}

// fallbackHeaders are the headers of a request the fallback pool serves,
// as ingress-nginx sets them for its custom default backend.
func (f *forwarding) fallbackHeaders() {
	e := f.h.route.ErrorPages
	h := f.x.HTTP.Header
	h.Set("X-Code", "503")
	h.Set("X-Format", h.Get("Accept"))
	f.setLabels(h, e)
}

func (f *forwarding) setLabels(h http.Header, e *ErrorPages) {
	h.Set("X-Namespace", e.Namespace)
	h.Set("X-Ingress-Name", e.Ingress)
	h.Set("X-Service-Name", e.Service)
	h.Set("X-Service-Port", e.ServicePort)
}

// answer sends a member's answer to the client, or the error backend's
// instead when it intercepts the status and answers.
func (f *forwarding) answer(m *balancer.Member, resp *http.Response) {
	e := f.h.route.ErrorPages
	if !e.intercepts(resp.StatusCode, false) {
		f.respond(m, resp)
		return
	}
	page, done := f.fetchErrorPage(resp.StatusCode)
	if page == nil {
		f.respond(m, resp) // the original answer
		return
	}
	// The member's body is not sent: a little is drained so that its
	// connection may be kept, and the connection closed otherwise.
	discard(resp)
	m.Stats.InFlight.Add(-1)
	f.writePage(page, done, resp.StatusCode)
}

// fail answers the proxy's own error, or the error backend's answer
// instead when it intercepts the status and answers.
func (f *forwarding) fail(err error) {
	if e := f.h.route.ErrorPages; e != nil {
		if status, _ := classify(err); e.intercepts(status, true) {
			if page, done := f.fetchErrorPage(status); page != nil {
				f.writePage(page, done, status)
				return
			}
		}
	}
	writeError(f.w, f.x.HTTP, err)
}

// fetchErrorPage asks the error backend for the page of status: a GET of
// "/" with the request's query and headers, no body, and the X-* headers
// of ingress-nginx's custom error pages. It returns the answer's head and
// the function that releases it, or nil when the backend could not be
// reached or answered with a malformed head in time.
func (f *forwarding) fetchErrorPage(status int) (*http.Response, func()) {
	e := f.h.route.ErrorPages
	r := f.x.HTTP
	set := e.Pool.Members()
	key, _ := hashKey(e.Pool, f.x)
	i := e.Pool.Algorithm.Pick(set, key, nil)
	if i < 0 {
		return nil, nil
	}
	member := set.Member(i)
	member.Stats.InFlight.Add(1)
	member.Stats.Requests.Add(1)
	ctx, cancel := context.WithTimeout(r.Context(), e.Timeout)
	done := func() {
		cancel()
		member.Stats.InFlight.Add(-1)
	}
	req := f.errorPageRequest(ctx, e, member.Address, status)
	transport := e.Transport
	if transport == nil {
		transport = e.Pool.Transport
	}
	resp, err := transport.RoundTrip(req)
	if err == nil && !validFieldNames(resp.Header) {
		resp.Body.Close()
		err = errBadHead
	}
	if err != nil {
		member.Stats.Failures.Add(1)
		done()
		f.h.log.Debug("proxy: the error backend did not answer", "pool", e.Pool.Name, "status", status, "error", err)
		return nil, nil
	}
	return resp, func() { resp.Body.Close(); done() }
}

// errorPageRequest builds the request to the error backend's member addr.
func (f *forwarding) errorPageRequest(ctx context.Context, e *ErrorPages, addr string, status int) *http.Request {
	r := f.x.HTTP
	u := &url.URL{Scheme: "http", Host: addr, Path: "/", RawQuery: r.URL.RawQuery}
	if e.Pool.Scheme.UsesTLS() {
		u.Scheme = "https"
	}
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	delete(h, "Content-Length")
	delete(h, "Transfer-Encoding")
	h.Set("X-Code", strconv.Itoa(status))
	h.Set("X-Format", r.Header.Get("Accept"))
	h.Set("X-Original-URI", r.RequestURI)
	f.setLabels(h, e)
	if h.Get("X-Request-Id") == "" {
		h.Set("X-Request-Id", newRequestID())
	}
	h.Set("X-Forwarded-For", f.x.ClientIP.String())
	req := &http.Request{Method: http.MethodGet, URL: u, Header: h, Host: r.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	return req.WithContext(ctx)
}

// writePage sends the error backend's answer: its status, headers and
// body. The original status only decides whether the connection is kept
// (not after a request body left unread).
func (f *forwarding) writePage(page *http.Response, done func(), original int) {
	defer done()
	header := f.w.Header()
	copyResponseHeaders(header, page.Header, nil)
	if original == http.StatusRequestEntityTooLarge || original == http.StatusRequestTimeout {
		header.Set("Connection", "close")
	}
	f.w.WriteHeader(page.StatusCode)
	if err := f.copyBody(page); err != nil {
		// The client has a status line already: cut the connection so
		// that a truncated page cannot pass for a complete one.
		panic(http.ErrAbortHandler)
	}
}
