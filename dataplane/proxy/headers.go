package proxy

import (
	"encoding/hex"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// isHopHeader reports whether a canonical name is one of the hop-by-hop
// headers of RFC 9110 §7.6.1 or their historical companions; they are
// never forwarded in either direction.
func isHopHeader(name string) bool {
	switch name {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// isForwardingHeader reports whether a canonical name is a forwarding
// header, believed only from trusted proxies.
func isForwardingHeader(name string) bool {
	switch name {
	case "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port",
		"X-Forwarded-Scheme", "X-Forwarded-Ssl", "X-Original-Forwarded-For", "X-Scheme",
		"X-Real-Ip", "Forwarded":
		return true
	}
	return false
}

// removeHopHeaders deletes the hop-by-hop headers and every header the
// Connection header names.
func removeHopHeaders(h http.Header) {
	removeConnectionNamed(h)
	for name := range h {
		if isHopHeader(name) {
			delete(h, name)
		}
	}
}

// removeConnectionNamed deletes the headers the Connection header names.
// The usual options are not looked up by their canonical names: close
// names a Close field, deleted as such, and keep-alive a hop-by-hop header
// removed anyway.
func removeConnectionNamed(h http.Header) {
	for _, line := range h["Connection"] {
		for name := range strings.SplitSeq(line, ",") {
			switch name = strings.TrimSpace(name); {
			case name == "":
			case strings.EqualFold(name, "close"):
				delete(h, "Close")
			case strings.EqualFold(name, "keep-alive"):
			default:
				h.Del(name)
			}
		}
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

// isUnforwardable reports whether nginx would not pass on a request
// header: names with an underscore (ingress-nginx's default,
// underscores_in_headers off), which CGI-style backends would read as
// X-Forwarded-For or X-Real-IP once '_' and '-' are folded; and Proxy, which
// such backends take for the HTTP_PROXY setting (httpoxy).
func isUnforwardable(name string) bool {
	return name == "Proxy" || strings.IndexByte(name, '_') >= 0
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
	removeConnectionNamed(h)
	// One pass deletes what is not forwarded: the hop-by-hop headers,
	// the unforwardable ones, and the forwarding headers of a peer that
	// is not a trusted proxy.
	for name := range h {
		if isHopHeader(name) || isUnforwardable(name) || !x.PeerTrusted && isForwardingHeader(name) {
			delete(h, name)
		}
	}
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
	values := valueSlab{make([]string, 0, 8)}
	setForwardingHeaders(x, h, &values)
	if _, ok := h["User-Agent"]; !ok {
		// Keep net/http from adding its own User-Agent.
		values.set(h, "User-Agent", "")
	}
	if _, ok := h["X-Request-Id"]; !ok {
		values.set(h, "X-Request-Id", newRequestID())
	}
}

// valueSlab hands out the one-value slices of new headers from one
// allocation. Each slice's capacity is its length, so that appending to
// one never writes into another's.
type valueSlab struct{ values []string }

func (s *valueSlab) set(h http.Header, name, value string) {
	s.values = append(s.values, value)
	n := len(s.values)
	h[name] = s.values[n-1 : n : n]
}

// setForwardingHeaders sets X-Forwarded-For, -Host, -Proto, -Port, X-Scheme
// (as ingress-nginx does) and X-Real-IP. Incoming values are kept
// (X-Forwarded-For extended) only when the peer is a trusted proxy: h holds
// none from anyone else (prepareRequestHeaders removed them).
func setForwardingHeaders(x *exchange.Request, h http.Header, values *valueSlab) {
	peer := peerText(x)
	client := peer
	if x.ClientIP.IsValid() && x.ClientIP != x.Peer {
		client = x.ClientIP.String()
	}
	if prior := h["X-Forwarded-For"]; len(prior) > 0 {
		values.set(h, "X-Forwarded-For", strings.Join(prior, ", ")+", "+peer)
	} else {
		values.set(h, "X-Forwarded-For", peer)
	}
	if _, ok := h["X-Forwarded-Host"]; !ok {
		values.set(h, "X-Forwarded-Host", x.HTTP.Host)
	}
	if _, ok := h["X-Forwarded-Port"]; !ok && x.Port != "" {
		values.set(h, "X-Forwarded-Port", x.Port)
	}
	values.set(h, "X-Forwarded-Proto", x.Scheme)
	values.set(h, "X-Real-Ip", client)
	values.set(h, "X-Scheme", x.Scheme)
}

// peerText returns the peer's address as text. It is the host of the
// request's RemoteAddr, without an allocation, when that is how netip
// writes the address too (as it is for every TCP peer); x.Peer.String()
// otherwise ("invalid IP" for an address that could not be parsed).
func peerText(x *exchange.Request) string {
	host, _, err := net.SplitHostPort(x.HTTP.RemoteAddr)
	var buf [64]byte
	if err == nil && x.Peer.IsValid() && string(x.Peer.AppendTo(buf[:0])) == host {
		return host
	}
	return x.Peer.String()
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
	var digits [32]byte
	hex.Encode(digits[:], b[:])
	return string(digits[:])
}

// copyResponseHeaders copies a member's response headers to the client's,
// without hop-by-hop headers and without the member's Server (what runs
// behind ramjetd is nobody's business; dst holds ramjetd's own when
// server_tokens asks for one), and announces the trailers the member
// announced. Value slices are shared, not copied: src is the member's
// response head, which nothing changes afterwards.
func copyResponseHeaders(dst, src http.Header, trailer http.Header) {
	removeConnectionNamed(src)
	for k, vv := range src {
		if isHopHeader(k) || k == "Server" {
			continue
		}
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

// validFieldNames reports whether every field name of a member's head is
// a token. net/http reads "Content-Length : 2" (space before the colon) as
// a field named "Content-Length " instead of refusing the head, so the
// length would be missed and the body read until the member closes; RFC
// 9112 §5.1 has a proxy reject such a head or fix it, and nginx answers
// 502 ("upstream sent invalid header"), as ramjetd does.
func validFieldNames(h http.Header) bool {
	for name := range h {
		if !httpguts.ValidHeaderFieldName(name) {
			return false
		}
	}
	return true
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

// CopyForwardable copies into dst the request headers of x that ramjetd
// forwards to a member: not the hop-by-hop headers nor those Connection
// names, not Content-Length, the unforwardable names or, from a peer that
// is not a trusted proxy, the forwarding headers. It then sets the
// forwarding headers (X-Forwarded-For, -Host, -Port, -Proto, X-Real-IP,
// X-Scheme) as for a member. Value slices are shared with x, which is not
// changed. External authentication builds its subrequests with it.
func CopyForwardable(dst http.Header, x *exchange.Request) {
	src := x.HTTP.Header
	for name, values := range src {
		if isHopHeader(name) || isUnforwardable(name) || name == "Content-Length" ||
			!x.PeerTrusted && isForwardingHeader(name) || headerHasToken(src, "Connection", name) {
			continue
		}
		dst[name] = values
	}
	setForwardingHeaders(x, dst, &valueSlab{make([]string, 0, 6)})
}

// EnsureRequestID gives the request headers h an X-Request-Id when they
// have none, the one the member then receives too.
func EnsureRequestID(h http.Header) {
	if _, ok := h["X-Request-Id"]; !ok {
		h["X-Request-Id"] = []string{newRequestID()}
	}
}
