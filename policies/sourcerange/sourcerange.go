// Package sourcerange is the route policy that allows and denies clients by
// address, as ingress-nginx's allowlist-source-range (whitelist-source-range)
// and denylist-source-range: the deny list is checked first, then, when an
// allow list is given, the client must be in it. A refused client gets 403.
//
// The client is exchange.Request.ClientIP, the address the data plane
// settled on (the peer's, or the right-most untrusted X-Forwarded-For entry
// behind a trusted proxy), never the connection's RemoteAddr. A request
// without a valid client address is refused whenever either list is set.
//
// Lookups are a binary search over merged ranges built once per
// configuration load: no lock, and no allocation for a request that passes
// (a refusal allocates only what setting its Content-Type header takes).
package sourcerange

import (
	"fmt"
	"net/http"
	"net/netip"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// forbiddenBody is the body of a refusal, made once so that writing it
// does not allocate.
var forbiddenBody = []byte("Forbidden: your address may not use this route\n")

// Handler refuses requests whose client is denied or not allowed, and
// passes the others to the next handler.
type Handler struct {
	allow *Set // nil: everyone not denied
	deny  *Set // nil: nobody denied
	next  exchange.Handler
	// otherwise serves the refused clients instead of the 403, when set
	// (satisfy any: they may still pass another control).
	otherwise exchange.Handler
}

// New returns a Handler for the allow and deny lists (CIDRs or single
// addresses). A nil or empty allow list allows everyone not denied; with
// both lists empty every request passes. An error names the list, the
// index and the value of a bad entry.
func New(allow, deny []string, next exchange.Handler) (*Handler, error) {
	if next == nil {
		return nil, fmt.Errorf("next handler is nil")
	}
	h := &Handler{next: next}
	var err error
	if h.allow, err = optionalSet(allow); err != nil {
		return nil, fmt.Errorf("allow: %w", err)
	}
	if h.deny, err = optionalSet(deny); err != nil {
		return nil, fmt.Errorf("deny: %w", err)
	}
	return h, nil
}

// optionalSet is nil for an empty list, and the list's Set otherwise.
func optionalSet(cidrs []string) (*Set, error) {
	if len(cidrs) == 0 {
		return nil, nil
	}
	return NewSet(cidrs)
}

// Otherwise makes h pass the clients it refuses to refused instead of
// answering 403: with ingress-nginx's satisfy any, an address the lists
// refuse may still pass the other access controls, which refused holds.
func (h *Handler) Otherwise(refused exchange.Handler) { h.otherwise = refused }

// Serve passes x on when x.ClientIP is permitted; a refused client gets 403,
// or goes to the Otherwise handler when there is one.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if h.permits(x.ClientIP) {
		h.next.Serve(w, x)
		return
	}
	if h.otherwise != nil {
		h.otherwise.Serve(w, x)
		return
	}
	forbidden(w, x.HTTP)
}

// permits reports whether client may pass: not in the deny list and, when
// there is an allow list, in it. It fails closed: when any list exists, a
// client without a valid address (the zero Addr) is refused, since it can
// be checked against neither list.
func (h *Handler) permits(client netip.Addr) bool {
	if h.allow == nil && h.deny == nil {
		return true
	}
	if !client.IsValid() {
		return false
	}
	if h.deny != nil && h.deny.Contains(client) {
		return false
	}
	return h.allow == nil || h.allow.Contains(client)
}

// forbidden writes the 403 answer, without a body for HEAD.
func forbidden(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	if r == nil || r.Method != http.MethodHead {
		w.Write(forbiddenBody)
	}
}
