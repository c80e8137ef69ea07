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
	line, fields, size, ok := splitHead(buf)
	if !ok {
		return h, false
	}
	h.size = size
	if h.method, h.target, ok = parseRequestLine(line); !ok {
		return h, false
	}
	hosts := 0
	h.header, ok = parseFields(fields, func(name, value string) (keep, ok bool) {
		switch name {
		case "Host":
			hosts++
			h.host = value
			return false, true
		case "Content-Length", "Transfer-Encoding", "Expect", "Upgrade", "Http2-Settings":
			return false, false
		case "Connection":
			if httpguts.HeaderValuesContainsToken([]string{value}, "upgrade") {
				return false, false
			}
			h.close = h.close || httpguts.HeaderValuesContainsToken([]string{value}, "close")
		}
		return true, true
	})
	if !ok || hosts != 1 || !httpguts.ValidHostHeader(h.host) {
		return h, false
	}
	return h, true
}

// splitHead returns the start line and the field lines (each ending in
// CRLF) of the head at the start of buf, and the head's size with its
// blank line, when buf holds all of it. One string holds the head: the
// lines, and the names and values parsed from them, are parts of it.
func splitHead(buf []byte) (start, fields string, size int, ok bool) {
	end := bytes.Index(buf, crlfcrlf)
	if end < 0 {
		return "", "", 0, false
	}
	start, fields, _ = strings.Cut(string(buf[:end+2]), "\r\n")
	return start, fields, end + 4, true
}

// parseFields parses field lines strictly into a header: each name a token
// right before its colon, canonical; each value free of control bytes
// other than tab, trimmed. field sees every field first and says whether
// the header keeps it, or whether the head is not one to take (ok false).
// Pragma: no-cache gets its Cache-Control, as net/http does. One
// allocation holds every value slice, and each field is hashed once.
func parseFields(lines string, field func(name, value string) (keep, ok bool)) (http.Header, bool) {
	n := strings.Count(lines, "\n")
	header := make(http.Header, n)
	values := make([]string, n)
	// The names kept so far, to find repeated ones without a second map
	// lookup per field; heads with more fields than room use the map.
	var room [16]string
	kept := room[:0]
	pragma := false
	for lines != "" {
		eol := strings.IndexByte(lines, '\n')
		if eol < 1 || lines[eol-1] != '\r' {
			return nil, false // a bare LF: net/http's to judge
		}
		line := lines[:eol-1]
		lines = lines[eol+1:]
		colon := strings.IndexByte(line, ':')
		if colon < 0 || !httpguts.ValidHeaderFieldValue(line[colon+1:]) {
			return nil, false
		}
		name, ok := fieldName(line[:colon])
		if !ok {
			return nil, false
		}
		value := textproto.TrimString(line[colon+1:])
		if keep, ok := field(name, value); !ok {
			return nil, false
		} else if !keep {
			continue
		}
		if repeated(header, kept, n > len(room), name) {
			header[name] = append(header[name], value)
			continue
		}
		kept = append(kept, name)
		pragma = pragma || name == "Pragma"
		values[0] = value
		header[name] = values[:1:1]
		values = values[1:]
	}
	if pragma {
		fixPragmaCacheControl(header)
	}
	return header, true
}

// repeated reports whether header has name already: from the kept names
// when they fit on the stack, from the map otherwise.
func repeated(header http.Header, kept []string, many bool, name string) bool {
	if many {
		_, ok := header[name]
		return ok
	}
	for _, k := range kept {
		if k == name {
			return true
		}
	}
	return false
}

// fieldName checks that name is a token, with no space before the colon
// (unlike net/http's reading), and returns its canonical form: name itself
// when it is canonical already, as most are.
func fieldName(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	canonical, upper := true, true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !tokenByte[c] {
			return "", false
		}
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			canonical = false
		}
		upper = c == '-'
	}
	if canonical {
		return name, true
	}
	return canonicalCommonName(name), true
}

// tokenByte holds the bytes of RFC 9110's token grammar, as httpguts
// knows them.
var tokenByte = func() (t [256]bool) {
	for c := range 128 {
		t[c] = httpguts.IsTokenRune(rune(c))
	}
	return t
}()

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

// validMethod reports whether m is a token, the grammar of methods as of
// field names.
func validMethod(m string) bool {
	return httpguts.ValidHeaderFieldName(m)
}

// canonicalCommonName canonicalises name, a token, in a buffer on the
// stack, and returns the interned common name it matches, or an allocated
// canonical form.
func canonicalCommonName(name string) string {
	var buf [32]byte
	if len(name) > len(buf) {
		return textproto.CanonicalMIMEHeaderKey(name)
	}
	b := buf[:len(name)]
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
	if common, ok := commonNames[string(b)]; ok {
		return common
	}
	return string(b)
}

// commonNames are canonical field names that arrive spelled otherwise
// often enough to intern: ETag, and the lower-case names that HTTP/2-minded
// clients and proxies send.
var commonNames = func() map[string]string {
	names := []string{
		"Accept", "Accept-Encoding", "Accept-Language", "Accept-Ranges", "Access-Control-Allow-Origin",
		"Age", "Authorization", "Cache-Control", "Connection", "Content-Disposition", "Content-Encoding",
		"Content-Language", "Content-Length", "Content-Md5", "Content-Security-Policy", "Content-Type",
		"Cookie", "Date", "Etag", "Expires", "Forwarded", "Host", "If-Match", "If-Modified-Since",
		"If-None-Match", "Last-Modified", "Link", "Location", "Origin", "Pragma", "Referer",
		"Retry-After", "Server", "Set-Cookie", "Strict-Transport-Security", "Te", "Traceparent",
		"User-Agent", "Vary", "Via", "Www-Authenticate", "X-Content-Type-Options", "X-Forwarded-For",
		"X-Forwarded-Host", "X-Forwarded-Proto", "X-Frame-Options", "X-Real-Ip", "X-Request-Id",
		"X-Ua-Compatible", "X-Xss-Protection",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}()

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
