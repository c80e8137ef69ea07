package router

import (
	"errors"
	"strings"
)

// Errors of NormalizePath. Each is answered with 400.
var (
	ErrNULInPath       = errors.New("the path holds a NUL byte")
	ErrPathAboveRoot   = errors.New("the path climbs above the root with dot-segments")
	ErrPathNotAbsolute = errors.New("the path does not start with /")
)

// NormalizePath returns the path nginx would match locations against: the
// already percent-decoded path (net/http decodes it, %2F included) with
// dot-segments resolved and repeated slashes merged. It allocates only when
// the path changes.
func NormalizePath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", ErrPathNotAbsolute
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", ErrNULInPath
	}
	if !strings.Contains(p, "//") && !hasDotSegment(p) {
		return p, nil
	}
	return resolve(p)
}

// hasDotSegment reports whether p has a "." or ".." segment.
func hasDotSegment(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' || i+1 >= len(p) || p[i+1] != '.' {
			continue
		}
		rest := p[i+2:]
		if rest == "" || rest[0] == '/' || rest == "." || strings.HasPrefix(rest, "./") {
			return true
		}
	}
	return false
}

// resolve rebuilds p segment by segment.
func resolve(p string) (string, error) {
	segments := make([]string, 0, strings.Count(p, "/"))
	trailingSlash := false
	for seg := range strings.SplitSeq(p[1:], "/") {
		trailingSlash = false
		switch seg {
		case "":
			trailingSlash = true
		case ".":
			trailingSlash = true
		case "..":
			if len(segments) == 0 {
				return "", ErrPathAboveRoot
			}
			segments = segments[:len(segments)-1]
			trailingSlash = true
		default:
			segments = append(segments, seg)
		}
	}
	var b strings.Builder
	b.Grow(len(p))
	for _, seg := range segments {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if trailingSlash || len(segments) == 0 {
		b.WriteByte('/')
	}
	return b.String(), nil
}

// NormalizeHost turns a Host header into the name matched against domains:
// the port removed, lower case, without a trailing dot. It allocates only
// for names that are not lower case already.
func NormalizeHost(hostport string) string {
	host := hostport
	if strings.HasPrefix(host, "[") {
		if end := strings.IndexByte(host, ']'); end > 0 {
			host = host[:end+1]
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	for i := 0; i < len(host); i++ {
		if c := host[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(host)
		}
	}
	return host
}
