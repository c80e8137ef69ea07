// Package cors answers CORS preflights and adds CORS headers to answers,
// as ingress-nginx's enable-cors and cors-* annotations do.
//
// With the origin "*" (or no origin listed) every response carries the
// CORS headers with Access-Control-Allow-Origin: *, and every OPTIONS
// request is answered here with 204. With a list, a request whose Origin
// is listed gets its Origin echoed back with the other CORS headers, and
// its OPTIONS requests are answered here; other requests pass untouched
// but for Vary. The CORS headers replace what the member sent under the
// same names (nginx's more_set_headers). The handler runs before basic
// auth, so preflights never need credentials.
//
// Differences from ingress-nginx:
//   - Origins are matched anchored at both ends. nginx's regex,
//     ((https://a\.example\.com)|(https://[A-Za-z0-9\-]+\.example\.com))$,
//     is anchored at the end only, so any value that merely ends with a
//     listed origin passes there.
//   - Case is folded for ASCII letters only, and a wildcard label is one
//     to 63 ASCII letters, digits and hyphens: an echoed origin is always
//     ASCII. "null" is matched byte for byte (nginx: case-insensitively).
//   - With an origin list, every response carries Vary: Origin, added to
//     the member's Vary values, including responses to requests whose
//     Origin is missing or not listed (the Fetch standard's advice, so that
//     no cache serves an answer without CORS headers, or one origin's
//     answer, to another origin). nginx adds no Vary. With "*" the answer
//     does not depend on Origin and no Vary is added.
//   - Credentials are off by default and refused with "*" (by
//     configuration validation, and again by New); ingress-nginx sends
//     Access-Control-Allow-Credentials: true by default, even with "*".
//   - The preflight's Content-Type is "text/plain; charset=utf-8"; nginx's
//     template sends "text/plain charset=UTF-8", without the semicolon.
//   - Configured methods and headers are joined with ", ". The defaults are
//     ingress-nginx's strings, byte for byte. The max age is a duration,
//     sent in whole seconds rounded up.
//
// As in ingress-nginx, scheme and port must match exactly and the default
// port is not normalised: "https://example.com:443" is not
// "https://example.com". Browsers never send the default port, so list
// origins without it.
package cors

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// DefaultMethods is Access-Control-Allow-Methods when none are configured,
// ingress-nginx's default.
const DefaultMethods = "GET, PUT, POST, DELETE, PATCH, OPTIONS"

// DefaultHeaders is Access-Control-Allow-Headers when none are configured,
// ingress-nginx's default.
const DefaultHeaders = "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"

// DefaultMaxAge is Access-Control-Max-Age in seconds (20 days) when no
// max age is configured, ingress-nginx's default.
const DefaultMaxAge = 1728000

// Response header names, in canonical form so that they index an
// http.Header directly.
const (
	hdrAllowOrigin      = "Access-Control-Allow-Origin"
	hdrAllowCredentials = "Access-Control-Allow-Credentials"
	hdrAllowMethods     = "Access-Control-Allow-Methods"
	hdrAllowHeaders     = "Access-Control-Allow-Headers"
	hdrExposeHeaders    = "Access-Control-Expose-Headers"
	hdrMaxAge           = "Access-Control-Max-Age"
	hdrVary             = "Vary"
	hdrOrigin           = "Origin"
)

// Handler applies a route's CORS policy before passing requests to the
// next handler. Build it with New; it is safe for concurrent use.
type Handler struct {
	next exchange.Handler
	// all is true for the origin "*": CORS applies to every request.
	all     bool
	origins matcher
	// gateway is config.CORS.GatewayAPI; echoOrigin, echoMethods and
	// echoHeaders are its "*" values with credentials, answered with what
	// the request sends.
	gateway                              bool
	echoOrigin, echoMethods, echoHeaders bool
	// Header values, each a one-element slice of capacity one: they are
	// put in response headers as they are, and an append to them copies.
	anyOrigin   []string // "*"
	credentials []string // nil when credentials are off
	methods     []string
	headers     []string
	expose      []string // nil when none are configured
	maxAge      []string
	vary        []string // "Origin"
	contentType []string
	zero        []string // Content-Length: 0
	// pool holds the per-request state of the header edit, so that an
	// actual request allocates nothing but exchange.EditHeader's writer.
	pool sync.Pool
}

// New compiles cfg into a Handler that passes requests on to next. It
// checks again what configuration validation guarantees (origin shapes,
// header names, no credentials with "*", a max age that is not negative)
// and fails on what it cannot serve.
func New(cfg *config.CORS, next exchange.Handler) (*Handler, error) {
	if cfg == nil {
		return nil, errors.New("cors configuration is nil")
	}
	if next == nil {
		return nil, errors.New("next handler is nil")
	}
	h := &Handler{next: next}
	var err error
	if h.origins, h.all, err = compileOrigins(cfg.AllowOrigins, cfg.GatewayAPI); err != nil {
		return nil, err
	}
	if cfg.AllowCredentials && h.all && !cfg.GatewayAPI {
		return nil, errors.New(`allow_credentials: credentials cannot be allowed for the origin "*"`)
	}
	h.gateway = cfg.GatewayAPI
	h.echoOrigin = h.gateway && cfg.AllowCredentials && h.all
	h.echoMethods = h.gateway && cfg.AllowCredentials && slices.Contains(cfg.AllowMethods, "*")
	h.echoHeaders = h.gateway && cfg.AllowCredentials && slices.Contains(cfg.AllowHeaders, "*")
	if err := h.compileValues(cfg); err != nil {
		return nil, err
	}
	h.pool.New = func() any {
		e := &edit{h: h}
		e.fn = e.apply
		return e
	}
	return h, nil
}

// compileValues joins the header values once.
func (h *Handler) compileValues(cfg *config.CORS) error {
	methods, err := joinNames("allow_methods", cfg.AllowMethods, DefaultMethods, false)
	if err != nil {
		return err
	}
	headers, err := joinNames("allow_headers", cfg.AllowHeaders, DefaultHeaders, false)
	if err != nil {
		return err
	}
	expose, err := joinNames("expose_headers", cfg.ExposeHeaders, "", true)
	if err != nil {
		return err
	}
	maxAge, err := maxAgeSeconds(cfg.MaxAge.Std())
	if err != nil {
		return err
	}
	h.anyOrigin = []string{"*"}
	if cfg.AllowCredentials {
		h.credentials = []string{"true"}
	}
	h.methods, h.headers, h.maxAge = []string{methods}, []string{headers}, []string{maxAge}
	if expose != "" {
		h.expose = []string{expose}
	}
	h.vary = []string{hdrOrigin}
	h.contentType, h.zero = []string{"text/plain; charset=utf-8"}, []string{"0"}
	return nil
}

// joinNames joins header names (or methods, which are tokens as well) with
// ", ", or returns def for an empty list.
func joinNames(field string, names []string, def string, starAllowed bool) (string, error) {
	if len(names) == 0 {
		return def, nil
	}
	for i, n := range names {
		if n == "*" && starAllowed {
			continue
		}
		if err := config.ValidateHeaderName(n); err != nil {
			return "", fmt.Errorf("%s[%d]: %w", field, i, err)
		}
	}
	return strings.Join(names, ", "), nil
}

// maxAgeSeconds formats a max age in whole seconds, rounded up (a
// sub-second age must not become 0, which turns caching off); zero means
// DefaultMaxAge.
func maxAgeSeconds(d time.Duration) (string, error) {
	switch {
	case d < 0:
		return "", fmt.Errorf("max_age: %s is negative", d)
	case d == 0:
		return strconv.Itoa(DefaultMaxAge), nil
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10), nil
}

// Serve answers an OPTIONS request to which CORS applies with 204 and the
// CORS headers, without calling the next handler. Other requests go to the
// next handler, whose response headers get the CORS headers (when CORS
// applies) and Vary: Origin (with an origin list) just before they are
// written.
//
// With GatewayAPI, a preflight (OPTIONS with Origin and
// Access-Control-Request-Method) is always answered here: from an origin
// not allowed, with 204 and no CORS headers.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	req := x.HTTP.Header
	origin := h.allowOrigin(req)
	isOptions := x.HTTP.Method == http.MethodOptions
	switch {
	case origin != nil && isOptions:
		h.preflight(w, origin, req)
	case h.gateway && isOptions && len(req[hdrOrigin]) > 0 && len(req["Access-Control-Request-Method"]) > 0:
		h.preflight(w, nil, req)
	default:
		h.forward(w, x, origin)
	}
}

// allowOrigin returns the Access-Control-Allow-Origin value for a request,
// or nil when CORS does not apply to it. A listed origin is returned as
// the first Origin value of the request itself, re-sliced to capacity one:
// no copy, and an append to it cannot write into the request's header.
func (h *Handler) allowOrigin(req http.Header) []string {
	if h.all && !h.echoOrigin {
		return h.anyOrigin
	}
	vv := req[hdrOrigin]
	if h.echoOrigin {
		if len(vv) == 0 || !isOrigin(vv[0]) {
			return nil
		}
		return vv[:1:1]
	}
	if len(vv) == 0 || !h.origins.match(vv[0]) {
		return nil
	}
	return vv[:1:1]
}

// preflight answers 204 with the CORS headers (none when origin is nil).
// Methods and headers "*" with credentials (GatewayAPI) are the ones the
// preflight asks for, when they are tokens.
func (h *Handler) preflight(w http.ResponseWriter, origin []string, req http.Header) {
	hdr := w.Header()
	h.decorate(hdr, origin)
	if origin != nil && h.echoMethods {
		echoTokens(hdr, hdrAllowMethods, req["Access-Control-Request-Method"])
	}
	if origin != nil && h.echoHeaders {
		echoTokens(hdr, hdrAllowHeaders, req["Access-Control-Request-Headers"])
	}
	hdr["Content-Type"] = h.contentType
	hdr["Content-Length"] = h.zero
	w.WriteHeader(http.StatusNoContent)
}

// forward calls the next handler with a writer that decorates the
// response headers before they are written. When the next handler returns
// without writing anything, the headers are decorated for the answer that
// net/http then sends.
func (h *Handler) forward(w http.ResponseWriter, x *exchange.Request, origin []string) {
	e := h.pool.Get().(*edit)
	e.origin, e.done = origin, false
	h.next.Serve(exchange.EditHeader(w, e.fn), x)
	if !e.done {
		e.apply(w.Header())
	}
	// Not deferred: after a panic, e stays out of the pool, as a writer
	// still holding it might be used again.
	e.origin = nil
	h.pool.Put(e)
}

// edit is the state of one response's header edit.
type edit struct {
	h      *Handler
	origin []string // Access-Control-Allow-Origin, nil when CORS does not apply
	done   bool
	fn     func(http.Header) // e.apply, bound once
}

// apply decorates the response headers.
func (e *edit) apply(hdr http.Header) {
	e.done = true
	e.h.decorate(hdr, e.origin)
}

// decorate sets the CORS headers when origin is not nil, replacing the
// values already there, and adds Origin to Vary for an origin list.
func (h *Handler) decorate(hdr http.Header, origin []string) {
	if origin != nil {
		hdr[hdrAllowOrigin] = origin
		if h.credentials != nil {
			hdr[hdrAllowCredentials] = h.credentials
		}
		hdr[hdrAllowMethods] = h.methods
		hdr[hdrAllowHeaders] = h.headers
		if h.expose != nil {
			hdr[hdrExposeHeaders] = h.expose
		}
		hdr[hdrMaxAge] = h.maxAge
	}
	if !h.all || h.echoOrigin {
		h.addVary(hdr)
	}
}

// echoTokens sets the response header name to the first value of a
// preflight's request header when it is a comma-separated list of tokens,
// and removes it otherwise (nothing the client sent is echoed unchecked).
func echoTokens(hdr http.Header, name string, values []string) {
	if len(values) == 0 {
		delete(hdr, name)
		return
	}
	for item := range strings.SplitSeq(values[0], ",") {
		if config.ValidateHeaderName(strings.TrimSpace(item)) != nil {
			delete(hdr, name)
			return
		}
	}
	hdr[name] = values[:1:1]
}

// addVary adds Origin to Vary unless Vary already holds it or "*". The
// values already there are kept; an append never writes into their array.
func (h *Handler) addVary(hdr http.Header) {
	vv := hdr[hdrVary]
	for _, v := range vv {
		if hasToken(v, hdrOrigin) || hasToken(v, "*") {
			return
		}
	}
	if len(vv) == 0 {
		hdr[hdrVary] = h.vary
		return
	}
	hdr[hdrVary] = append(vv[:len(vv):len(vv)], hdrOrigin)
}
