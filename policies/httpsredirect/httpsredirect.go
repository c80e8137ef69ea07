// Package httpsredirect answers plain-HTTP requests with a permanent
// redirect to HTTPS (308, as ingress-nginx answers). Routes that serve ACME
// HTTP-01 challenges (under ACMEChallengePrefix) are built without it, so
// challenges stay reachable over plain HTTP.
package httpsredirect

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// ACMEChallengePrefix is the path prefix of ACME HTTP-01 challenges.
const ACMEChallengePrefix = "/.well-known/acme-challenge/"

// Handler redirects plain-HTTP requests and passes the others to Next.
type Handler struct {
	// TrimTrailingSlash removes one "/" that ends the request target
	// (ingress-nginx's preserve-trailing-slash: false).
	TrimTrailingSlash bool
	// Port, when not empty, is written into the target after the host
	// (ingress-nginx's use-port-in-redirects).
	Port string
	Next exchange.Handler
}

// New is the redirect of a route whose target is shaped by t (nil: the
// host without a port, the path and query as sent).
func New(t *config.HTTPSRedirectTarget, next exchange.Handler) Handler {
	h := Handler{Next: next}
	if t != nil {
		h.TrimTrailingSlash = t.TrimTrailingSlash
		if t.Port != 0 {
			h.Port = strconv.Itoa(t.Port)
		}
	}
	return h
}

// Serve answers 308 to https://host/path?query for a request made over
// plain HTTP (as the client made it: a trusted proxy's X-Forwarded-Proto
// counts), and passes every other request on.
func (h Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if x.Scheme == "https" {
		h.Next.Serve(w, x)
		return
	}
	w.Header().Set("Location", h.Target(x.HTTP))
	w.WriteHeader(http.StatusPermanentRedirect)
}

// Target is the HTTPS address of r: its host without its port (with the
// handler's Port when set), and its path and query as the client sent
// them, less one trailing "/" with TrimTrailingSlash.
func (h Handler) Target(r *http.Request) string {
	host := r.Host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	uri := r.URL.RequestURI()
	if h.TrimTrailingSlash {
		uri = strings.TrimSuffix(uri, "/")
	}
	if h.Port != "" {
		return "https://" + host + ":" + h.Port + uri
	}
	return "https://" + host + uri
}
