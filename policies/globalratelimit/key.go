package globalratelimit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// key evaluates a policy's key for a request.
type key []config.KeyPart

// value is the key of the request: its parts one after the other, or the
// client address when that is empty (as ingress-nginx falls back to
// $remote_addr).
func (k key) value(x *exchange.Request) string {
	if len(k) == 1 {
		if v := partValue(&k[0], x); v != "" {
			return v
		}
		return x.ClientIP.String()
	}
	var b strings.Builder
	for i := range k {
		b.WriteString(partValue(&k[i], x))
	}
	if b.Len() == 0 {
		return x.ClientIP.String()
	}
	return b.String()
}

// maxPrefix bounds the escaped "<namespace>.<key>": memcached keys are at
// most 250 bytes, and the window number and ".counter" take at most 30.
const maxPrefix = 220

// counterPrefix is "<namespace>.<key>", escaped; a key too long for
// memcached is replaced by its SHA-256.
func counterPrefix(namespace, sample string) string {
	p := namespace + "." + escape(sample)
	if len(p) <= maxPrefix {
		return p
	}
	sum := sha256.Sum256([]byte(sample))
	return namespace + ".~" + hex.EncodeToString(sum[:])
}

// counterKey is the memcached key of the counter of window id.
func counterKey(prefix string, id int64) string {
	return prefix + "." + strconv.FormatInt(id, 10) + ".counter"
}

const upperHex = "0123456789ABCDEF"

// escape percent-encodes every byte but letters, digits and "-._~", as
// nginx's ngx.escape_uri, with which lua-resty-memcached escapes the keys
// of ingress-nginx's counters: memcached keys hold no space or control
// character.
func escape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	return string(b)
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// partValue is the value of one part of a key for the request.
func partValue(p *config.KeyPart, x *exchange.Request) string {
	switch {
	case p.ClientAddress:
		return x.ClientIP.String()
	case p.Header != "":
		if x.HTTP == nil {
			return ""
		}
		return x.HTTP.Header.Get(p.Header)
	case p.Cookie != "":
		if x.HTTP == nil {
			return ""
		}
		v, _ := exchange.CookieValue(x.HTTP.Header, p.Cookie)
		return v
	}
	return p.Text
}
