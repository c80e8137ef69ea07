package proxy

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// hashKey returns the balancing key of a hash pool and, for cookie affinity
// without a cookie yet, the Set-Cookie value that makes the next requests
// of the client stick to the member this one goes to. Without a key (no
// such header or application cookie) the request goes to a random point of
// the ring. It does not allocate, except to make a new affinity cookie.
func hashKey(p *upstream.Pool, x *exchange.Request) (uint64, string) {
	if p.Balance != config.BalanceHash {
		return 0, ""
	}
	switch p.Hash.By {
	case config.HashByClientIP:
		ip := x.ClientIP.As16()
		return balancer.HashBytes(ip[:]), ""
	case config.HashByHeader:
		// The name was canonicalised when the pool was built.
		if v := x.HTTP.Header[p.Hash.Header]; len(v) > 0 && v[0] != "" {
			return balancer.HashKey(v[0]), ""
		}
	case config.HashByCookie:
		if v, ok := exchange.CookieValue(x.HTTP.Header, p.Hash.Cookie.Name); ok && v != "" {
			return balancer.HashKey(v), ""
		}
		value := strconv.FormatUint(rand.Uint64(), 36)
		return balancer.HashKey(value), affinityCookie(p.Hash.Cookie, value, x.Scheme == "https")
	case config.HashByCookieValue:
		// The application's cookie: hashed, never set.
		if v, ok := exchange.CookieValue(x.HTTP.Header, p.Hash.CookieName); ok && v != "" {
			return balancer.HashKey(v), ""
		}
	case config.HashByRequestURI:
		if uri := requestURI(x.HTTP); uri != "" {
			return balancer.HashKey(uri), ""
		}
	}
	return rand.Uint64(), ""
}

// requestURI is the request target as the client sent it, before any
// rewrite and without normalisation, as nginx's $request_uri: path and
// query. An absolute-form target ("http://host/p?q") counts from its path,
// so that it hashes as the same request in origin form.
func requestURI(r *http.Request) string {
	uri := r.RequestURI
	if strings.HasPrefix(uri, "/") {
		return uri
	}
	_, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return uri // "*" of OPTIONS
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// affinityCookie renders the session cookie, Secure on HTTPS or when asked,
// HttpOnly always, as ingress-nginx sets it.
func affinityCookie(c *config.AffinityCookie, value string, https bool) string {
	ck := http.Cookie{
		Name:     c.Name,
		Value:    value,
		Path:     c.Path,
		Domain:   c.Domain,
		Secure:   c.Secure || https,
		HttpOnly: true,
	}
	if c.MaxAge > 0 {
		ck.MaxAge = int(c.MaxAge.Std().Seconds())
		ck.Expires = time.Now().Add(c.MaxAge.Std())
	}
	switch c.SameSite {
	case "Lax":
		ck.SameSite = http.SameSiteLaxMode
	case "Strict":
		ck.SameSite = http.SameSiteStrictMode
	case "None":
		ck.SameSite = http.SameSiteNoneMode
	}
	return ck.String()
}
