package http1

import (
	"bytes"
	"context"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// simpleHead is what parseSimple found in a request head it takes.
type simpleHead struct {
	method, target, host string
	header               http.Header
	close                bool // Connection: close
	size                 int  // bytes of the head, blank line included
}

// parseSimple parses buf, the start of a request stream, when it holds a
// whole request head that Server serves itself: HTTP/1.1, origin-form
// target, CRLF line ends, one valid Host, no body (no Content-Length or
// Transfer-Encoding), no Expect, no upgrade, and only field names and
// values that net/http would accept too. Anything else (an incomplete head
// included) returns ok false and is left to net/http, which answers it as
// it always has.
func parseSimple(buf []byte) (h simpleHead, ok bool) {
	end := bytes.Index(buf, crlfcrlf)
	if end < 0 {
		return h, false
	}
	h.size = end + 4
	// One string holds the head: names, values, method and target are
	// parts of it.
	head := string(buf[:end+2])
	line, rest, _ := strings.Cut(head, "\r\n")
	if h.method, h.target, ok = parseRequestLine(line); !ok {
		return h, false
	}
	fields := 0
	for i := 0; i < len(rest); i++ {
		if rest[i] == '\n' {
			fields++
		}
	}
	h.header = make(http.Header, fields)
	values := make([]string, fields) // one allocation for every value slice
	hosts := 0
	for rest != "" {
		line, rest, _ = strings.Cut(rest, "\r\n")
		name, value, found := strings.Cut(line, ":")
		if !found || !validFieldName(name) || !validFieldValue(value) {
			return h, false
		}
		value = textproto.TrimString(value)
		name = canonicalName(name)
		switch name {
		case "Host":
			hosts++
			h.host = value
			continue
		case "Content-Length", "Transfer-Encoding", "Expect", "Upgrade", "Http2-Settings":
			return h, false
		case "Connection":
			if httpguts.HeaderValuesContainsToken([]string{value}, "upgrade") {
				return h, false
			}
			h.close = h.close || httpguts.HeaderValuesContainsToken([]string{value}, "close")
		}
		if vv, seen := h.header[name]; seen {
			h.header[name] = append(vv, value)
			continue
		}
		values[0] = value
		h.header[name] = values[:1:1]
		values = values[1:]
	}
	if hosts != 1 || !httpguts.ValidHostHeader(h.host) {
		return h, false
	}
	fixPragmaCacheControl(h.header)
	return h, true
}

var crlfcrlf = []byte("\r\n\r\n")

// parseRequestLine splits "METHOD /target HTTP/1.1".
func parseRequestLine(line string) (method, target string, ok bool) {
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || proto != "HTTP/1.1" || method == http.MethodConnect || !validMethod(method) {
		return "", "", false
	}
	if len(target) == 0 || target[0] != '/' {
		return "", "", false // absolute-form, asterisk-form: net/http's
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c >= 0x7f {
			return "", "", false
		}
	}
	return method, target, true
}

func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		if !httpguts.IsTokenRune(rune(m[i])) {
			return false
		}
	}
	return true
}

// validFieldName is a token; unlike net/http's reading, no space may come
// before the colon.
func validFieldName(name string) bool {
	return name != "" && httpguts.ValidHeaderFieldName(name)
}

// validFieldValue refuses control bytes other than horizontal tab; obs-fold
// cannot occur (lines are split at CRLF, and a line starting with a blank
// has no valid name).
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// canonicalName returns the canonical form of name without allocating
// when it is canonical already, as most are.
func canonicalName(name string) string {
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			return textproto.CanonicalMIMEHeaderKey(name)
		}
		upper = c == '-'
	}
	return name
}

// fixPragmaCacheControl does what net/http does to requests: "Pragma:
// no-cache" without Cache-Control gets "Cache-Control: no-cache".
func fixPragmaCacheControl(h http.Header) {
	if hp, ok := h["Pragma"]; ok && len(hp) > 0 && hp[0] == "no-cache" {
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = []string{"no-cache"}
		}
	}
}

// newRequest builds the *http.Request of h, with ctx, from the
// connection's template (its remote address and TLS state), as net/http
// would.
func newRequest(template *http.Request, ctx context.Context, h *simpleHead) (*http.Request, error) {
	u, err := url.ParseRequestURI(h.target)
	if err != nil {
		return nil, err
	}
	r := template.WithContext(ctx)
	r.Method = h.method
	r.URL = u
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.Header = h.header
	r.Host = h.host
	r.RequestURI = h.target
	r.Body = http.NoBody
	r.Close = h.close
	return r, nil
}
