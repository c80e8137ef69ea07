// Package approot answers a request for exactly "/" with a 302 to the
// application's root path on the same scheme and host, as ingress-nginx's
// app-root does (the query string is not carried over).
package approot

import (
	"net/http"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// Handler redirects "/" and passes other paths to Next.
type Handler struct {
	Path string
	Next exchange.Handler
}

// Serve answers 302 for the path "/" (after normalisation) and calls Next
// otherwise.
func (h Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if x.Path != "/" {
		h.Next.Serve(w, x)
		return
	}
	w.Header().Set("Location", x.Scheme+"://"+x.HTTP.Host+h.Path)
	w.WriteHeader(http.StatusFound)
}
