// Package basicauth is the route policy that requires HTTP basic
// authentication against an htpasswd file, as ingress-nginx's
// auth-type: basic (nginx auth_basic). A request without valid credentials
// gets 401 with WWW-Authenticate: Basic realm="<realm>"; a valid one goes to
// the next handler without its Authorization header, so that members never
// see credentials (ingress-nginx sets proxy_set_header Authorization "").
//
// The file is read and every hash checked once per configuration load
// (Load, Parse): an unsupported or malformed hash is a load error naming
// the line, never a per-request failure. Accepted hashes are bcrypt,
// SHA-256 crypt, SHA-512 crypt and Apache MD5.
//
// Password hashes are slow on purpose: bcrypt at cost 10 takes tens of
// milliseconds of CPU. Verifying one for each request of a logged-in
// browser would cap a route at a few dozen requests per second per core, so
// a Cache remembers credentials that verified: a keyed HMAC-SHA256 of the
// user and password, never the password. A hit skips the hash; a miss
// verifies and inserts only on success. The cache takes no mutex of its
// own and is bounded (see Cache).
//
// As with nginx, an unknown user is refused without hashing, so response
// times tell whether a user exists. Credentials longer than
// MaxCredentialBytes are refused unverified: SHA-crypt's work grows with the
// square of the password's length.
package basicauth

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// MaxCredentialBytes bounds the decoded "user:password" of a request.
const MaxCredentialBytes = 1024

// unauthorizedBody is the body of a refusal, made once so that writing it
// does not allocate.
var unauthorizedBody = []byte("Unauthorized: this route requires a valid user and password\n")

// Handler requires a valid user of its File before passing requests to the
// next handler.
type Handler struct {
	file      *File
	challenge string // the WWW-Authenticate value
	cache     *Cache
	limiter   *Limiter
	next      exchange.Handler
	// verified, when set, is called after each hash verification (tests).
	verified func()
}

// New returns a Handler for the users of f, announcing realm in its
// challenges. cache may be nil (no caching) and is meant to be shared by
// every route that uses f; limiter may be nil (no bound) and is meant to be
// shared by every route of the process. New panics when f or next is nil.
func New(f *File, realm string, cache *Cache, limiter *Limiter, next exchange.Handler) *Handler {
	if f == nil || next == nil {
		panic("basicauth: New with a nil File or next handler")
	}
	return &Handler{file: f, challenge: challenge(realm), cache: cache, limiter: limiter, next: next}
}

// challenge returns `Basic realm="<realm>"`. The configuration refuses
// realms with quotes or control characters; should one get here anyway,
// quotes and backslashes are escaped and control characters dropped.
func challenge(realm string) string {
	var b strings.Builder
	b.WriteString(`Basic realm="`)
	for i := 0; i < len(realm); i++ {
		switch c := realm[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c != 0x7f:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Serve passes x on without its Authorization header when it carries valid
// credentials, and answers 401 otherwise (503 when too many hashes are being
// verified to give this one a turn).
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	switch h.authorized(x.HTTP) {
	case granted:
		x.HTTP.Header.Del("Authorization")
		h.next.Serve(w, x)
	case busy:
		busyAnswer(w, x.HTTP)
	default:
		h.unauthorized(w, x.HTTP)
	}
}

// StripCredentials passes requests on without their Authorization header,
// for the requests of a route with basic authentication that skip it (a
// client another control let through under satisfy any): members never
// see credentials either way.
type StripCredentials struct {
	// Next serves the request; it must not be nil.
	Next exchange.Handler
}

// Serve removes the Authorization header and passes x on.
func (s StripCredentials) Serve(w http.ResponseWriter, x *exchange.Request) {
	x.HTTP.Header.Del("Authorization")
	s.Next.Serve(w, x)
}

// outcome is the result of checking credentials.
type outcome int

const (
	refused outcome = iota
	granted
	busy
)

// authorized checks the request's credentials against the file, from the
// cache or by verifying the hash when the limiter gives a turn.
func (h *Handler) authorized(r *http.Request) outcome {
	user, password, ok := credentials(r.Header)
	if !ok {
		return refused
	}
	e, ok := h.file.lookup(user)
	if !ok {
		return refused
	}
	var k cacheKey
	if h.cache != nil {
		k = h.cache.key(h.file.digest, user, password)
		if h.cache.has(k) {
			return granted
		}
	}
	if !h.limiter.acquire(r.Context()) {
		return busy
	}
	ok = e.verify(password)
	h.limiter.release()
	if h.verified != nil {
		h.verified()
	}
	if !ok {
		return refused
	}
	h.cache.add(k)
	return granted
}

// busyAnswer tells the client to try again: the hashes being verified use
// every turn the limiter gives.
func busyAnswer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method != http.MethodHead {
		w.Write(busyBody)
	}
}

var busyBody = []byte("Service Unavailable: too many sign-in attempts at once; try again\n")

// credentials returns the user and password of a single
// "Authorization: Basic <base64(user:password)>" header. The scheme is
// matched without regard to case and spaces or tabs around the parts are
// ignored; the password is everything after the first ':'. Anything else,
// including several Authorization headers, an empty password or credentials
// over MaxCredentialBytes, is refused.
func credentials(hdr http.Header) (user, password []byte, ok bool) {
	values := hdr.Values("Authorization")
	if len(values) != 1 {
		return nil, nil, false
	}
	v := strings.Trim(values[0], " \t")
	i := strings.IndexAny(v, " \t")
	if i < 0 || !strings.EqualFold(v[:i], "Basic") {
		return nil, nil, false
	}
	decoded, ok := decode(strings.Trim(v[i:], " \t"))
	if !ok {
		return nil, nil, false
	}
	user, password, ok = bytes.Cut(decoded, []byte(":"))
	if !ok || len(password) == 0 {
		return nil, nil, false
	}
	return user, password, true
}

// decode decodes standard base64 with or without padding, refusing any
// character outside the alphabet (the decoder would skip CR and LF) and
// results over MaxCredentialBytes.
func decode(token string) ([]byte, bool) {
	if token == "" || len(token) > base64.StdEncoding.EncodedLen(MaxCredentialBytes) {
		return nil, false
	}
	if strings.ContainsFunc(token, func(r rune) bool {
		return !(r == '+' || r == '/' || r == '=' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z')
	}) {
		return nil, false
	}
	enc := base64.StdEncoding
	if len(token)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(token)
	if err != nil || len(b) > MaxCredentialBytes {
		return nil, false
	}
	return b, true
}

// unauthorized writes the 401 answer with the challenge.
func (h *Handler) unauthorized(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", h.challenge)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	if r.Method != http.MethodHead {
		w.Write(unauthorizedBody)
	}
}
