package cors

import (
	"fmt"
	"regexp"
	"strings"
)

// originShape is the shape of an allowed origin that config validation
// guarantees (config.CORS.validate): a lower-case scheme, a host with at
// most one left-most "*." wildcard label, an optional port. New checks it
// again so that the matcher can rely on it.
var originShape = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$`)

// matcher holds the allowed origins of a list, compiled once. Matching is
// ASCII case-insensitive and anchored at both ends.
type matcher struct {
	exact []string   // whole origins
	wild  []wildcard // origins with a "*." first label
	null  bool       // "null" is listed; it is matched byte for byte
}

// wildcard is "https://*.example.com:8443" split around its "*":
// prefix "https://" and suffix ".example.com:8443".
type wildcard struct {
	prefix, suffix string
	anyDepth       bool // one or more labels, not exactly one
}

// compileOrigins reads an origin list. all is true when the list is empty
// or holds "*", which then stands for the whole list, as in ingress-nginx.
//
// anyDepth (the Gateway API's semantics) lets a wildcard stand for one or
// more labels instead of exactly one.
func compileOrigins(origins []string, anyDepth bool) (m matcher, all bool, err error) {
	if len(origins) == 0 {
		return matcher{}, true, nil
	}
	for i, o := range origins {
		switch {
		case o == "*":
			all = true
		case o == "null":
			m.null = true
		case !originShape.MatchString(o):
			return matcher{}, false, fmt.Errorf("allow_origins[%d]: %q is not an origin (scheme://host[:port], a *. wildcard as the first label at most, null or *)", i, o)
		case strings.Contains(o, "://*."):
			j := strings.Index(o, "://*.") + len("://")
			m.wild = append(m.wild, wildcard{prefix: o[:j], suffix: o[j+1:], anyDepth: anyDepth})
		default:
			m.exact = append(m.exact, o)
		}
	}
	if all {
		return matcher{}, true, nil
	}
	return m, false, nil
}

// match reports whether o is an allowed origin. A match is made of the
// configured bytes (ASCII letters in any case) and, for a wildcard, one
// label of ASCII letters, digits and hyphens: a matched value is always
// printable ASCII, safe to echo in a header.
func (m *matcher) match(o string) bool {
	if m.null && o == "null" {
		return true
	}
	for _, e := range m.exact {
		if equalFoldASCII(o, e) {
			return true
		}
	}
	for _, w := range m.wild {
		if w.match(o) {
			return true
		}
	}
	return false
}

// match reports whether o is the prefix, one label and the suffix. The
// suffix starts with ".", so the label holds no dot: exactly one label is
// covered.
//
// With anyDepth the part may be several labels joined by dots, each one
// as above, 253 bytes at most.
func (w wildcard) match(o string) bool {
	n := len(o) - len(w.prefix) - len(w.suffix)
	limit := maxLabel
	if w.anyDepth {
		limit = maxName
	}
	if n <= 0 || n > limit {
		return false
	}
	if !equalFoldASCII(o[:len(w.prefix)], w.prefix) || !equalFoldASCII(o[len(o)-len(w.suffix):], w.suffix) {
		return false
	}
	part := o[len(w.prefix) : len(w.prefix)+n]
	if !w.anyDepth {
		return isLabel(part)
	}
	for label := range strings.SplitSeq(part, ".") {
		if label == "" || len(label) > maxLabel || !isLabel(label) {
			return false
		}
	}
	return true
}

// isOrigin reports whether o has the shape of an origin a browser sends
// (scheme://host[:port], no wildcard): what an echoed "*" (GatewayAPI with
// credentials) may answer. "null" is not: any page can send it from a
// sandboxed frame.
func isOrigin(o string) bool {
	return originShape.MatchString(o) && !strings.Contains(o, "*")
}

// maxLabel is the longest DNS label (RFC 1035); nginx's pattern has no
// bound.
const maxLabel = 63

// maxName is the longest DNS name (RFC 1035).
const maxName = 253

// isLabel reports whether s is made of ASCII letters, digits and hyphens
// only, as nginx's [A-Za-z0-9\-]+.
func isLabel(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// equalFoldASCII is strings.EqualFold for ASCII letters only: no Unicode
// folding (strings.EqualFold holds the Kelvin sign K equal to "k"), so a
// match never lets a non-ASCII byte through.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// hasToken reports whether the comma-separated list v holds token,
// compared ASCII case-insensitively, spaces and tabs around items ignored.
func hasToken(v, token string) bool {
	for v != "" {
		item := v
		if i := strings.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			v = ""
		}
		if equalFoldASCII(strings.Trim(item, " \t"), token) {
			return true
		}
	}
	return false
}
