// Package exchange defines the request as the data plane handles it after
// routing, and the handler interface every route policy and action
// implements. It is a leaf package: policies and the proxy import it, it
// imports neither.
package exchange

import (
	"net/http"
	"net/netip"
)

// Request is one request with what ramjetd learnt about it before routing.
// The data plane fills it once per request; handlers read it and must not
// keep it after they return.
type Request struct {
	// HTTP is the request as the server parsed it. Its URL path is the one
	// the client sent; handlers that forward the request forward that path
	// unless a rewrite sets ForwardPath.
	HTTP *http.Request
	// Path is the normalised path (percent-decoded, dot-segments resolved,
	// repeated slashes merged) that routing and every access decision use.
	Path string
	// Captures are the submatches of a regex route ($0 is the whole
	// match), nil for other routes.
	Captures []string
	// ClientIP is the client's address: the peer's, or the right-most
	// untrusted address of X-Forwarded-For when the peer is a trusted proxy.
	ClientIP netip.Addr
	// Peer is the address of the connection's other end.
	Peer netip.Addr
	// PeerTrusted is true when Peer is in server.trusted_proxies.
	PeerTrusted bool
	// TLS is true when the client connected with TLS to ramjetd.
	TLS bool
	// Scheme is "https" or "http" as the client used it: the listener's, or
	// X-Forwarded-Proto sent by a trusted proxy.
	Scheme string
	// Port is the port of the listener the client connected to.
	Port string
	// ForwardPath, when not empty, replaces the path (not the query) sent
	// to the member. Rewrites set it.
	ForwardPath string
	// ForwardHost, when not empty, replaces the Host sent to the member.
	ForwardHost string
}

// Handler serves an exchange. Route policies wrap the next handler; actions
// (proxy, redirect, fixed response) end the chain.
type Handler interface {
	Serve(w http.ResponseWriter, x *Request)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(w http.ResponseWriter, x *Request)

// Serve calls f(w, x).
func (f HandlerFunc) Serve(w http.ResponseWriter, x *Request) { f(w, x) }

// Reset clears x for reuse from a pool.
func (x *Request) Reset() { *x = Request{} }

// StatusRecorder is implemented by the ResponseWriter ramjetd gives to
// handlers. It records a status that is not written to the client, such as
// 499 for a client that went away, or 101 for a switch of protocols written
// on a hijacked connection.
type StatusRecorder interface {
	RecordStatus(code int)
}

// RecordStatus records code on w when w keeps statuses, and does nothing
// otherwise.
func RecordStatus(w http.ResponseWriter, code int) {
	if r, ok := w.(StatusRecorder); ok {
		r.RecordStatus(code)
	}
}
