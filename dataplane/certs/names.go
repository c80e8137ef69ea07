package certs

import "strings"

// canonical returns name lower-case (ASCII) and without one trailing dot.
// It does not allocate when name is already canonical.
func canonical(name string) string {
	if isCanonical(name) {
		return name
	}
	return strings.ToLower(strings.TrimSuffix(name, "."))
}

// isCanonical reports whether name has no upper-case ASCII letter and no
// trailing dot.
func isCanonical(name string) bool {
	if strings.HasSuffix(name, ".") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// parentOf returns what follows the left-most label of name ("example.com"
// for "a.example.com"): the domain a one-label wildcard of name is under.
// ok is false when name has no non-empty left-most label or nothing after it.
func parentOf(name string) (parent string, ok bool) {
	i := strings.IndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return "", false
	}
	return name[i+1:], true
}

// wildcardParent returns the parent of a wildcard domain ("example.com" for
// "*.example.com"). ok is false when domain is not a wildcard domain.
func wildcardParent(domain string) (parent string, ok bool) {
	parent, found := strings.CutPrefix(domain, "*.")
	if !found || parent == "" {
		return "", false
	}
	return parent, true
}

// deepParent returns the parent of a wildcard domain of one or more labels
// ("example.com" for "**.example.com"). ok is false when domain is not
// one.
func deepParent(domain string) (parent string, ok bool) {
	parent, found := strings.CutPrefix(domain, "**.")
	if !found || parent == "" {
		return "", false
	}
	return parent, true
}
