// Package httpsredirect answers plain-HTTP requests with a permanent
// redirect to HTTPS (308, as ingress-nginx answers). Routes that serve ACME
// HTTP-01 challenges (under ACMEChallengePrefix) are built without it, so
// challenges stay reachable over plain HTTP.
package httpsredirect

import (
	"net/http"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// ACMEChallengePrefix is the path prefix of ACME HTTP-01 challenges.
const ACMEChallengePrefix = "/.well-known/acme-challenge/"

// Handler redirects plain-HTTP requests and passes the others to Next.
type Handler struct {
	Next exchange.Handler
}

// Serve answers 308 to https://host/path?query for a request made over
// plain HTTP (as the client made it: a trusted proxy's X-Forwarded-Proto
// counts), and passes every other request on.
func (h Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if x.Scheme == "https" {
		h.Next.Serve(w, x)
		return
	}
	w.Header().Set("Location", Target(x.HTTP))
	w.WriteHeader(http.StatusPermanentRedirect)
}

// Target is the HTTPS address of r: its host without a port, and its path
// and query as the client sent them.
func Target(r *http.Request) string {
	host := r.Host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	return "https://" + host + r.URL.RequestURI()
}
