package redirect

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// Derived answers with a redirect to the request's own URL with some of
// its parts changed, as the Gateway API's RequestRedirect filter: scheme,
// host, port and path (replaced whole, or the route's matched prefix
// replaced); the query string is kept, and a trailing "/" removed on
// request.
type Derived struct {
	code     int
	scheme   string // "" keeps the request's
	hostname string // "" keeps the request's
	port     string // "" derives it (see config.Redirect.Port)
	path     string // "" keeps the request's, unless prefix is set
	// prefix is the route's matched prefix, replaced by replacement when
	// replace is set.
	prefix, replacement string
	replace             bool
	// trim removes one "/" that ends the path and query.
	trim bool
}

var _ exchange.Handler = (*Derived)(nil)

// NewDerived returns the redirect of cfg (validated, without URL) for a
// route whose path prefix is prefix ("" for routes of other kinds).
func NewDerived(cfg *config.Redirect, prefix string) *Derived {
	h := &Derived{code: cfg.Code, scheme: cfg.Scheme, hostname: cfg.Hostname, path: cfg.Path, prefix: prefix, trim: cfg.TrimTrailingSlash}
	if h.code == 0 {
		h.code = DefaultCode
	}
	if cfg.Port != 0 {
		h.port = strconv.Itoa(cfg.Port)
	}
	if cfg.PathPrefix != nil {
		h.replacement, h.replace = *cfg.PathPrefix, true
	}
	return h
}

// Serve answers with the redirect.
func (h *Derived) Serve(w http.ResponseWriter, x *exchange.Request) {
	w.Header().Set("Location", h.location(x))
	w.WriteHeader(h.code)
}

func (h *Derived) location(x *exchange.Request) string {
	scheme := h.scheme
	if scheme == "" {
		scheme = x.Scheme
	}
	host := h.hostname
	if host == "" {
		host = hostOnly(x.HTTP.Host)
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port := h.locationPort(x, scheme); port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	start := b.Len()
	b.WriteString(h.targetPath(x))
	if q := x.HTTP.URL.RawQuery; q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	loc := b.String()
	if h.trim && b.Len()-start > 1 {
		// ingress-nginx trims the request URI, so a query ending in "/"
		// loses it too; the path "/" alone stays.
		loc = strings.TrimSuffix(loc, "/")
	}
	return loc
}

// locationPort is the port written in the Location, "" for none: the
// configured one; without it none when the scheme is set (its well-known
// port), or the listener's when the scheme is the listener's own (a trusted
// proxy's X-Forwarded-Proto may have changed it: the listener's port is
// then not the one the client used). A scheme's default port is never
// written.
func (h *Derived) locationPort(x *exchange.Request, scheme string) string {
	port := h.port
	if port == "" {
		if h.scheme != "" || x.Scheme != listenerScheme(x) {
			return ""
		}
		port = x.Port
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return ""
	}
	return port
}

func listenerScheme(x *exchange.Request) string {
	if x.TLS {
		return "https"
	}
	return "http"
}

// targetPath is the path of the Location, percent-encoded.
func (h *Derived) targetPath(x *exchange.Request) string {
	var p string
	switch {
	case h.replace:
		p = exchange.ReplacePrefix(x.Path, h.prefix, h.replacement)
	case h.path != "":
		p = h.path
	default:
		if p = x.HTTP.URL.EscapedPath(); p == "" {
			p = "/"
		}
		return p
	}
	return (&url.URL{Path: p}).EscapedPath()
}

// hostOnly is a Host header without its port; an IPv6 address keeps its
// brackets.
func hostOnly(host string) string {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.IndexByte(host[i:], ']') >= 0 {
		return host
	}
	return host[:i]
}
