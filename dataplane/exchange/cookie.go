package exchange

import (
	"net/http"
	"strings"
)

// NextCookie splits the first name=value pair off a Cookie header line and
// returns the rest of the line. ok is false for a pair without '='. Quotes
// around the value are removed. It does not allocate.
func NextCookie(line string) (name, value, rest string, ok bool) {
	pair, rest, _ := strings.Cut(line, ";")
	name, value, ok = strings.Cut(strings.TrimSpace(pair), "=")
	if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
		value = value[1 : len(value)-1]
	}
	return name, value, rest, ok
}

// CookieValue returns the value of the first cookie called name in the
// Cookie headers, without allocating.
func CookieValue(header http.Header, name string) (string, bool) {
	for _, line := range header["Cookie"] {
		for line != "" {
			n, v, rest, ok := NextCookie(line)
			if ok && n == name {
				return v, true
			}
			line = rest
		}
	}
	return "", false
}
