package proxy

import (
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// hopHeaders are the hop-by-hop headers of RFC 9110 §7.6.1 and their
// historical companions; they are never forwarded in either direction.
var hopHeaders = []string{
	"Connection",
	"Proxy-Connection",
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authorization",
	"Te",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
}

// forwardingHeaders are believed only from trusted proxies.
var forwardingHeaders = []string{
	"X-Forwarded-For",
	"X-Forwarded-Host",
	"X-Forwarded-Proto",
	"X-Forwarded-Port",
	"X-Forwarded-Scheme",
	"X-Forwarded-Ssl",
	"X-Original-Forwarded-For",
	"X-Scheme",
	"X-Real-Ip",
	"Forwarded",
}

// removeHopHeaders deletes the hop-by-hop headers and every header the
// Connection header names.
func removeHopHeaders(h http.Header) {
	for _, line := range h["Connection"] {
		for name := range strings.SplitSeq(line, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		delete(h, name)
	}
}

// upgradeType returns the protocol a request or response asks to switch
// to, or "" when it does not.
func upgradeType(h http.Header) string {
	if !headerHasToken(h, "Connection", "upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

// removeUnforwardable deletes the request headers that nginx does not pass
// on: names with an underscore (ingress-nginx's default,
// underscores_in_headers off), which CGI-style backends would read as
// X-Forwarded-For or X-Real-IP once '_' and '-' are folded; and Proxy, which
// such backends take for the HTTP_PROXY setting (httpoxy).
func removeUnforwardable(h http.Header) {
	for name := range h {
		if strings.IndexByte(name, '_') >= 0 {
			delete(h, name)
		}
	}
	delete(h, "Proxy")
}

// offersH2C reports whether an Upgrade value lists h2c among its protocols.
func offersH2C(upgrade string) bool {
	for proto := range strings.SplitSeq(upgrade, ",") {
		if strings.EqualFold(strings.TrimSpace(proto), "h2c") {
			return true
		}
	}
	return false
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, line := range h[name] {
		for v := range strings.SplitSeq(line, ",") {
			if strings.EqualFold(strings.TrimSpace(v), token) {
				return true
			}
		}
	}
	return false
}

// prepareRequestHeaders turns the client's headers into the member's, in
// place: the request belongs to the proxy from here on.
func prepareRequestHeaders(x *exchange.Request) {
	h := x.HTTP.Header
	upgrade := upgradeType(h)
	wantsTrailers := headerHasToken(h, "Te", "trailers")
	removeHopHeaders(h)
	removeUnforwardable(h)
	// h2c upgrades are never passed on: a member that accepted one would
	// take the connection out of ramjetd's routing and policies (h2c
	// smuggling). The request goes on as plain HTTP/1.1.
	if upgrade != "" && !offersH2C(upgrade) {
		h["Connection"] = []string{"Upgrade"}
		h["Upgrade"] = []string{upgrade}
	}
	if wantsTrailers {
		h["Te"] = []string{"trailers"}
	}
	setForwardingHeaders(x, h)
	if _, ok := h["User-Agent"]; !ok {
		// Keep net/http from adding its own User-Agent.
		h["User-Agent"] = []string{""}
	}
	if _, ok := h["X-Request-Id"]; !ok {
		h["X-Request-Id"] = []string{newRequestID()}
	}
}

// setForwardingHeaders sets X-Forwarded-For, -Host, -Proto, -Port, X-Scheme
// (as ingress-nginx does) and X-Real-IP. Incoming values are kept
// (X-Forwarded-For extended) only when the peer is a trusted proxy; from
// anyone else every forwarding header is removed first. The new values share
// one backing array: one allocation instead of six.
func setForwardingHeaders(x *exchange.Request, h http.Header) {
	peer := x.Peer.String()
	client := peer
	if x.ClientIP.IsValid() && x.ClientIP != x.Peer {
		client = x.ClientIP.String()
	}
	if !x.PeerTrusted {
		for _, name := range forwardingHeaders {
			delete(h, name)
		}
	}
	values := make([]string, 6)
	set := func(i int, name, value string) {
		values[i] = value
		h[name] = values[i : i+1 : i+1]
	}
	if prior := h["X-Forwarded-For"]; len(prior) > 0 {
		set(0, "X-Forwarded-For", strings.Join(prior, ", ")+", "+peer)
	} else {
		set(0, "X-Forwarded-For", peer)
	}
	if _, ok := h["X-Forwarded-Host"]; !ok {
		set(1, "X-Forwarded-Host", x.HTTP.Host)
	}
	if _, ok := h["X-Forwarded-Port"]; !ok && x.Port != "" {
		set(2, "X-Forwarded-Port", x.Port)
	}
	set(3, "X-Forwarded-Proto", x.Scheme)
	set(4, "X-Real-Ip", client)
	set(5, "X-Scheme", x.Scheme)
}

// newRequestID returns 32 random hex digits, like nginx's $request_id.
func newRequestID() string {
	var b [16]byte
	for i := 0; i < len(b); i += 8 {
		v := rand.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return hex.EncodeToString(b[:])
}

// copyResponseHeaders copies a member's response headers to the client's,
// without hop-by-hop headers, and announces the trailers the member
// announced. Value slices are shared, not copied: src is the member's
// response head, which nothing changes afterwards.
func copyResponseHeaders(dst, src http.Header, trailer http.Header) {
	removeHopHeaders(src)
	for k, vv := range src {
		if prior, ok := dst[k]; ok {
			dst[k] = append(prior, vv...)
		} else {
			dst[k] = vv
		}
	}
	if len(trailer) == 0 {
		return
	}
	names := make([]string, 0, len(trailer))
	for k := range trailer {
		names = append(names, k)
	}
	dst["Trailer"] = []string{strings.Join(names, ", ")}
}

// copyTrailers sets the member's trailers on the client's response.
// Trailers the member did not announce are sent with http.TrailerPrefix.
func copyTrailers(dst, trailer http.Header, announced int) {
	if len(trailer) == 0 {
		return
	}
	prefix := ""
	if len(trailer) != announced {
		prefix = http.TrailerPrefix
	}
	for k, vv := range trailer {
		dst[prefix+k] = vv
	}
}
