// Package rewrite changes the path or the Host a member receives, as
// ingress-nginx's rewrite-target and upstream-vhost: the new path replaces
// the whole path (the query string is kept), with $1 to $9 taken from the
// route's regex submatches; a target without them sends every matching
// request to that one path. As the Gateway API's URLRewrite, the new path
// may instead replace the prefix the route matched and keep the rest.
package rewrite

import (
	"net/http"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// Handler sets the forwarded path and Host, then calls Next.
type Handler struct {
	path  []piece // nil: the path is not rewritten
	fixed string  // the whole path when it has no submatches
	host  string
	// prefix is the route's matched prefix, replaced by replacement when
	// replace is set.
	prefix, replacement string
	replace             bool
	// forwarded is the X-Forwarded-Prefix template (nil: none), sent
	// with a rewritten path; forwardedFixed is its value when it has no
	// submatches.
	forwarded      []piece
	forwardedFixed []string
	next           exchange.Handler
}

// piece is a literal or a submatch reference of a path template.
type piece struct {
	literal string
	group   int // 1..9, 0 for a literal
}

// New compiles a rewrite for a route whose path prefix is prefix ("" for
// routes of other kinds); the configuration was validated (the path starts
// with "/" and refers to submatches only on regex routes, a path_prefix is
// only on prefix routes).
func New(cfg *config.Rewrite, prefix string, next exchange.Handler) *Handler {
	h := &Handler{host: cfg.Host, prefix: prefix, next: next}
	if cfg.PathPrefix != nil {
		h.replacement, h.replace = *cfg.PathPrefix, true
	}
	if cfg.Path != "" {
		h.path = parse(cfg.Path)
		if !captureRef(h.path) {
			h.fixed = cfg.Path
		}
	}
	if cfg.ForwardedPrefix != "" {
		h.forwarded = parse(cfg.ForwardedPrefix)
		if !captureRef(h.forwarded) {
			h.forwardedFixed = []string{cfg.ForwardedPrefix}[:1:1]
		}
	}
	return h
}

// captureRef reports whether a template refers to a submatch.
func captureRef(pieces []piece) bool {
	for _, p := range pieces {
		if p.group != 0 {
			return true
		}
	}
	return false
}

// parse splits a target into literals and $N references.
func parse(target string) []piece {
	var pieces []piece
	for target != "" {
		i := strings.IndexByte(target, '$')
		if i < 0 || i+1 == len(target) || target[i+1] < '1' || target[i+1] > '9' {
			end := len(target)
			if i >= 0 {
				end = i + 1
			}
			pieces = append(pieces, piece{literal: target[:end]})
			target = target[end:]
			continue
		}
		if i > 0 {
			pieces = append(pieces, piece{literal: target[:i]})
		}
		pieces = append(pieces, piece{group: int(target[i+1] - '0')})
		target = target[i+2:]
	}
	return pieces
}

// Serve sets x.ForwardPath and x.ForwardHost and calls Next.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if h.host != "" {
		x.ForwardHost = h.host
	}
	switch {
	case h.replace:
		x.ForwardPath = exchange.ReplacePrefix(x.Path, h.prefix, h.replacement)
	case h.fixed != "":
		x.ForwardPath = h.fixed
	case h.path != nil:
		x.ForwardPath = h.expand(x.Captures)
	}
	switch {
	case h.forwardedFixed != nil:
		x.HTTP.Header["X-Forwarded-Prefix"] = h.forwardedFixed
	case h.forwarded != nil:
		// An empty value sends no header, as nginx's proxy_set_header.
		if v := expand(h.forwarded, x.Captures); v != "" {
			x.HTTP.Header["X-Forwarded-Prefix"] = []string{v}
		} else {
			delete(x.HTTP.Header, "X-Forwarded-Prefix")
		}
	}
	h.next.Serve(w, x)
}

// expand fills the template with the submatches; a reference to a group the
// regex does not have, or that did not match, is empty (as in nginx).
func (h *Handler) expand(captures []string) string {
	if p := expand(h.path, captures); p != "" {
		return p
	}
	return "/"
}

// expand fills a template with the submatches.
func expand(pieces []piece, captures []string) string {
	var b strings.Builder
	for _, p := range pieces {
		if p.group == 0 {
			b.WriteString(p.literal)
		} else if p.group < len(captures) {
			b.WriteString(captures[p.group])
		}
	}
	return b.String()
}
