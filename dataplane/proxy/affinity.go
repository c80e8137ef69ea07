package proxy

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// The value of an affinity cookie is "<token>|<pool tag>", as ingress-nginx
// writes "<key>|<backend key>": the token is a random number (balanced
// mode), whose HashKey is the ring key, or the member's MemberKey
// (persistent mode), both in base 36; the pool tag (upstream.Pool's
// AffinityTag) says which pool set it, for sticky weighted actions. A value
// without "|" (an older cookie) is all token.

// hashKey returns the balancing key of a hash pool and, for cookie affinity
// in balanced mode without a cookie yet, the Set-Cookie value that makes the
// next requests of the client stick to the member this one goes to (in
// persistent mode pickMember sets the cookie, once it knows the member).
// Without a key (no such header or application cookie) the request goes to
// a random point of the ring. It does not allocate, except to make a new
// affinity cookie.
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
		token, _ := affinityValue(x, p)
		if p.Hash.Cookie.Mode == config.AffinityPersistent {
			// The member key, or 0, which names no member (but with a
			// chance of 2^-64).
			key, _ := balancer.ParseMemberKey(token)
			return key, ""
		}
		if token != "" {
			return balancer.HashKey(token), ""
		}
		key, cookie := newBalancedCookie(p, x)
		return key, cookie
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

// affinityValue splits the request's affinity cookie of pool p into its
// token and pool tag; both are empty without the cookie.
func affinityValue(x *exchange.Request, p *upstream.Pool) (token, tag string) {
	v, _ := exchange.CookieValue(x.HTTP.Header, p.Hash.Cookie.Name)
	if i := strings.LastIndexByte(v, '|'); i >= 0 {
		return v[:i], v[i+1:]
	}
	return v, ""
}

// newBalancedCookie returns the ring key and the Set-Cookie value of a new
// random token of balanced mode.
func newBalancedCookie(p *upstream.Pool, x *exchange.Request) (uint64, string) {
	var buf [16]byte
	token := strconv.AppendUint(buf[:0], rand.Uint64(), 36)
	return balancer.HashBytes(token), affinityCookie(p, string(token), x.Scheme == "https")
}

// maxCookieChecks bounds the random tokens tried for a new balanced cookie
// that leads to a member not tried yet (change_on_failure), as
// ingress-nginx's 20 checks.
const maxCookieChecks = 20

// pickMember picks the member of the next try with the pool's algorithm,
// and for cookie affinity keeps the cookie true to it:
//   - persistent: a request whose cookie names no member of the pool gets a
//     cookie naming the member that serves it; with change_on_failure a
//     retry does too;
//   - balanced with change_on_failure: a retry draws new tokens until one
//     leads to a member not tried yet, goes there and sends its cookie.
//
// Without change_on_failure a retry keeps the client's cookie, so its next
// request tries its member first again.
func (f *forwarding) pickMember(tried []int) int {
	p := f.pool
	if p.Balance != config.BalanceHash || p.Hash.By != config.HashByCookie {
		return p.Algorithm.Pick(f.set, f.key, tried)
	}
	c := p.Hash.Cookie
	retry := len(tried) > 0
	if c.Mode == config.AffinityPersistent {
		i := p.Algorithm.Pick(f.set, f.key, tried)
		if i < 0 {
			return i
		}
		// A request whose cookie names a member of the pool keeps it, but
		// for change_on_failure.
		if own := f.set.KeyIndex(f.key); own < 0 || (retry && c.ChangeOnFailure && own != i) {
			key := balancer.MemberKey(f.set.Member(i).Address)
			var buf [16]byte
			f.setCookie = affinityCookie(p, string(balancer.AppendMemberKey(buf[:0], key)), f.x.Scheme == "https")
		}
		return i
	}
	if retry && c.ChangeOnFailure {
		var buf [16]byte
		for range maxCookieChecks {
			token := strconv.AppendUint(buf[:0], rand.Uint64(), 36)
			key := balancer.HashBytes(token)
			if i := p.Algorithm.Pick(f.set, key, nil); i >= 0 && !slices.Contains(tried, i) {
				f.key, f.setCookie = key, affinityCookie(p, string(token), f.x.Scheme == "https")
				return i
			}
		}
	}
	return p.Algorithm.Pick(f.set, f.key, tried)
}

// stickyTarget returns the target of a sticky action whose pool set the
// request's affinity cookie, nil when there is none: ingress-nginx keeps a
// client on the main backend or on the canary that set its cookie before
// any canary rule is looked at.
func (h *Handler) stickyTarget(x *exchange.Request) *Target {
	if !h.route.Sticky {
		return nil
	}
	for i := range h.targets {
		t := &h.targets[i]
		if t.Pool == nil || t.Pool.AffinityTag == "" {
			continue
		}
		if _, tag := affinityValue(x, t.Pool); tag == t.Pool.AffinityTag {
			return t
		}
	}
	return nil
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

// affinityCookie renders the session cookie of pool p holding token,
// Secure on HTTPS or when asked, HttpOnly always, as ingress-nginx sets it.
func affinityCookie(p *upstream.Pool, token string, https bool) string {
	c := p.Hash.Cookie
	ck := http.Cookie{
		Name:     c.Name,
		Value:    token + "|" + p.AffinityTag,
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
