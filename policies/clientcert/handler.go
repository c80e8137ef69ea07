package clientcert

import (
	"net/http"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/router"
)

// Handler runs a route of an application with client_auth: it answers 421
// to a request whose Host is not the name the connection's handshake asked
// for (so that a certificate given to one host never opens another, HTTP/2
// connection coalescing included), answers a missing or failed certificate
// by the policy, and sets the ssl-client-* headers for the member after
// removing the client's.
type Handler struct {
	// Policy is the application's client_auth.
	Policy *Policy
	// PlainHTTP is set when plain-HTTP requests go through to the route
	// without a certificate in mode on too: the route redirects them to
	// HTTPS, or serves ACME HTTP-01 challenges.
	PlainHTTP bool
	// Next is the route.
	Next exchange.Handler
}

// Serve answers x or passes it to Next.
func (h Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	removeClientHeaders(x.HTTP.Header)
	state := x.HTTP.TLS
	if state == nil {
		h.servePlain(w, x)
		return
	}
	if !sameName(state.ServerName, x.HTTP.Host) {
		http.Error(w, "Misdirected Request: this host asks for a client certificate; connect with its name (SNI)", http.StatusMisdirectedRequest)
		return
	}
	h.serveOutcome(w, x, h.Policy.check(state, time.Now()))
}

// servePlain serves a plain-HTTP request, which has no certificate: nginx
// does not check these at all; ramjetd refuses them in mode on unless the
// route lets them through (PlainHTTP).
func (h Handler) servePlain(w http.ResponseWriter, x *exchange.Request) {
	o := outcome{verify: verifyNone}
	if h.Policy.mode == config.VerifyOn && !h.PlainHTTP {
		o.refused, o.message = true, noCertMessage
	}
	h.serveOutcome(w, x, o)
}

// serveOutcome answers a refused request, or one whose subject the policy
// does not accept, and passes the others on with the headers set.
func (h Handler) serveOutcome(w http.ResponseWriter, x *exchange.Request, o outcome) {
	p := h.Policy
	switch {
	case o.refused && p.errorPage != "":
		w.Header().Set("Location", p.errorPage)
		w.WriteHeader(http.StatusFound)
	case o.refused:
		http.Error(w, "Bad Request: "+o.message, http.StatusBadRequest)
	case p.subject != nil && !p.subject.MatchString(subjectOf(o)):
		http.Error(w, "Forbidden: client certificate unauthorized", http.StatusForbidden)
	default:
		setHeaders(x.HTTP.Header, o, p.pass)
		h.Next.Serve(w, x)
	}
}

// subjectOf is the subject DN of the outcome's certificate, "" without one.
func subjectOf(o outcome) string {
	if o.leaf == nil {
		return ""
	}
	return distinguishedName(o.leaf.RawSubject)
}

// sameName reports whether the handshake's server name is the request's
// host. Case, a trailing dot and the port do not count.
func sameName(serverName, host string) bool {
	return serverName != "" && strings.EqualFold(strings.TrimSuffix(serverName, "."), router.NormalizeHost(host))
}
