// Package redirect is the route action that answers with a redirect: to a
// fixed target used literally (Handler), or to the request's URL with its
// scheme, host, port or path changed (Derived, the Gateway API's
// RequestRedirect).
package redirect

import (
	"net/http"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// DefaultCode is the status of a redirect without one.
const DefaultCode = http.StatusMovedPermanently

// Handler answers every request with a redirect to URL.
type Handler struct {
	URL  string
	Code int
}

// New returns a Handler; a zero code means DefaultCode.
func New(url string, code int) Handler {
	if code == 0 {
		code = DefaultCode
	}
	return Handler{URL: url, Code: code}
}

// Serve answers with the redirect.
func (h Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	w.Header().Set("Location", h.URL)
	w.WriteHeader(h.Code)
}
