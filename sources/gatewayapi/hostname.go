package gatewayapi

import (
	"cmp"
	"slices"
	"strings"
)

// intersect is the hostname a listener hostname and a route hostname both
// match, and whether there is one. An empty hostname matches any; a
// wildcard "*.example.com" matches names of one or more labels before
// ".example.com" (not example.com itself). The intersection is the more
// specific of the two: listener "*.example.com" and route "*.com" serve
// "*.example.com"; listener "*.example.com" and route "a.b.example.com"
// serve "a.b.example.com". Names compare without regard to case and are
// returned in lower case.
func intersect(listener, route string) (string, bool) {
	l, r := strings.ToLower(listener), strings.ToLower(route)
	switch {
	case l == "":
		return r, true
	case r == "":
		return l, true
	case l == r:
		return l, true
	case wildcardCovers(l, r):
		return r, true
	case wildcardCovers(r, l):
		return l, true
	}
	return "", false
}

// wildcardCovers reports whether the wildcard w ("*.suffix") matches name,
// which is an exact name or a narrower wildcard: name ends in ".suffix"
// with at least one label before it.
func wildcardCovers(w, name string) bool {
	suffix, ok := strings.CutPrefix(w, "*")
	if !ok {
		return false
	}
	return len(name) > len(suffix) && strings.HasSuffix(name, suffix)
}

// servedHostnames are the hostnames a route serves on a listener: each of
// its hostnames intersected with the listener's, without duplicates, in
// the route's order; a route without hostnames serves the listener's
// hostname. None means the route does not attach for want of a hostname.
func servedHostnames(listener string, route []string) []string {
	if len(route) == 0 {
		return []string{strings.ToLower(listener)}
	}
	var out []string
	for _, h := range route {
		if served, ok := intersect(listener, h); ok && !slices.Contains(out, served) {
			out = append(out, served)
		}
	}
	return out
}

// compareHostnames orders served hostnames most specific first, as the
// spec's hostname precedence does for names one request matches: exact
// names, then wildcards, then "" (any); within each, more characters
// first, then alphabetical.
func compareHostnames(a, b string) int {
	return cmp.Or(
		cmp.Compare(hostnameClass(a), hostnameClass(b)),
		-cmp.Compare(len(a), len(b)),
		strings.Compare(a, b),
	)
}

// hostnameClass is 0 for an exact name, 1 for a wildcard, 2 for "".
func hostnameClass(h string) int {
	switch {
	case h == "":
		return 2
	case strings.HasPrefix(h, "*"):
		return 1
	}
	return 0
}

// covers reports whether every request the served hostname name matches
// is also matched by the served hostname other: the same name, "", or a
// wildcard that matches it.
func covers(other, name string) bool {
	return other == name || other == "" || wildcardCovers(other, name)
}
