// Package headers sets, adds and removes request headers (before the
// request goes to the member) and response headers (before the answer goes
// to the client), as the Gateway API's header modifier filters do. Names are
// canonicalised and values checked when the configuration loads, which also
// refuses the headers ramjetd sets itself (X-Forwarded-*, X-Real-IP,
// X-Request-ID, Forwarded), so no configuration can forge them.
package headers

import (
	"net/http"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// Handler applies header changes around Next.
type Handler struct {
	request, response *changes
	next              exchange.Handler
}

// changes are HeaderChanges with canonical names, set values prepared once.
type changes struct {
	remove []string
	set    []setHeader
	add    []config.Header
}

// setHeader is a header to set with its value slice, shared by every
// request: its capacity is 1, so anything appended later copies it.
type setHeader struct {
	name   string
	values []string
}

// New compiles the request and response changes; either may be nil.
func New(request, response *config.HeaderChanges, next exchange.Handler) *Handler {
	return &Handler{request: compile(request), response: compile(response), next: next}
}

func compile(hc *config.HeaderChanges) *changes {
	if hc == nil {
		return nil
	}
	c := &changes{}
	for _, name := range hc.Remove {
		c.remove = append(c.remove, http.CanonicalHeaderKey(name))
	}
	for _, h := range hc.Set {
		c.set = append(c.set, setHeader{name: http.CanonicalHeaderKey(h.Name), values: []string{h.Value}[:1:1]})
	}
	for _, h := range hc.Add {
		c.add = append(c.add, config.Header{Name: http.CanonicalHeaderKey(h.Name), Value: h.Value})
	}
	return c
}

// apply removes, then sets, then adds.
func (c *changes) apply(h http.Header) {
	for _, name := range c.remove {
		delete(h, name)
	}
	for _, hd := range c.set {
		h[hd.name] = hd.values
	}
	for _, hd := range c.add {
		h[hd.Name] = append(h[hd.Name], hd.Value)
	}
}

// Serve changes the request headers, arranges for the response headers to
// be changed when they are written, and calls Next.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if h.request != nil {
		h.request.apply(x.HTTP.Header)
	}
	if h.response != nil {
		w = exchange.EditHeader(w, h.response.apply)
	}
	h.next.Serve(w, x)
}
