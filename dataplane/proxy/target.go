package proxy

import "strings"

// The request target the member receives, as nginx's proxy_pass without a
// URI sends it (ingress-nginx renders no other): the path as the client
// sent it when no rewrite applies, and a rewritten path percent-encoded as
// nginx encodes the paths it builds (ngx_escape_uri, NGX_ESCAPE_URI).

// nginxEscapes marks the bytes nginx percent-encodes in a path it builds:
// control bytes, space, `"`, `#`, `%`, `<`, `>`, `?`, `\`, `^`, "`", `{`,
// `|`, `}`, DEL and every byte above it. Go's url package encodes these
// too, and also `!`, `'`, `(`, `)`, `*`, `[` and `]`, which nginx leaves.
var nginxEscapes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c <= ' ' || c >= 0x7f || strings.IndexByte("\"#%<>?\\^`{|}", byte(c)) >= 0
	}
	return t
}()

// escapePath percent-encodes a decoded path as nginx does when a rewrite
// changed it; p itself when nothing needs encoding.
func escapePath(p string) string {
	n := 0
	for i := 0; i < len(p); i++ {
		if nginxEscapes[p[i]] {
			n++
		}
	}
	if n == 0 {
		return p
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(p) + 2*n)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !nginxEscapes[c] {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// verbatimPath reports whether a path as received (url.URL.RawPath) must
// be sent through URL.Opaque to reach the member unchanged: it holds bytes
// that a URI should carry percent-encoded (`"`, `<`, `{`, bytes above
// 0x7F...), which url.URL.EscapedPath would encode, as nginx does not. A
// path that could end the request line or the path early (space, control
// bytes, `#`, `?`) is never sent verbatim, nor one that starts with "//",
// which net/http would send as an absolute URI: their bytes are encoded.
func verbatimPath(raw string) bool {
	if strings.HasPrefix(raw, "//") {
		return false
	}
	verbatim := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c <= ' ' || c == 0x7f || c == '#' || c == '?':
			return false
		case c != '%' && nginxEscapes[c]:
			verbatim = true
		}
	}
	return verbatim
}
