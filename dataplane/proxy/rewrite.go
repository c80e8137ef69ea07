package proxy

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// ResponseRewrite rewrites headers of the members' answers
// (config.ResponseRewrite): Location and Refresh as nginx's proxy_redirect,
// the Domain and Path of Set-Cookie as proxy_cookie_domain and
// proxy_cookie_path. In each list the first rule that matches applies.
type ResponseRewrite struct {
	Redirects     []TextRewrite
	CookieDomains []TextRewrite
	CookiePaths   []TextRewrite
}

// TextRewrite is one compiled rule.
type TextRewrite struct {
	from     string
	to       string
	re       *regexp.Regexp // nil for a literal From
	template string         // To as a regexp.Expand template
}

// NewTextRewrite compiles a rule of config.TextRewrite (validated).
func NewTextRewrite(r config.TextRewrite) (TextRewrite, error) {
	t := TextRewrite{from: r.From, to: r.To}
	if !r.Regex {
		return t, nil
	}
	re, err := config.CompileRewriteRegex(r.From)
	if err != nil {
		return t, err
	}
	t.re, t.template = re, expandTemplate(r.To)
	return t, nil
}

// expandTemplate writes $1..$9 as ${1}..${9} and any other $ as $$, so that
// regexp.Expand neither reads "$1a" as a group named "1a" nor takes a $ of
// the text for a reference.
func expandTemplate(to string) string {
	if !strings.Contains(to, "$") {
		return to
	}
	var b strings.Builder
	for i := 0; i < len(to); i++ {
		c := to[i]
		switch {
		case c == '$' && i+1 < len(to) && to[i+1] >= '1' && to[i+1] <= '9':
			b.WriteString("${")
			b.WriteByte(to[i+1])
			b.WriteByte('}')
			i++
		case c == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// replaceRegex returns To expanded with the submatches of value, which
// then replaces value whole, as nginx's regex forms do.
func (t *TextRewrite) replaceRegex(value string) (string, bool) {
	m := t.re.FindStringSubmatchIndex(value)
	if m == nil {
		return "", false
	}
	return string(t.re.ExpandString(nil, t.template, value, m)), true
}

// prefix rewrites value when From is its prefix (compared
// case-sensitively), or when the regex matches.
func prefix(rules []TextRewrite, value string) (string, bool) {
	for i := range rules {
		t := &rules[i]
		if t.re != nil {
			if v, ok := t.replaceRegex(value); ok {
				return v, true
			}
			continue
		}
		if strings.HasPrefix(value, t.from) {
			return t.to + value[len(t.from):], true
		}
	}
	return "", false
}

// domain rewrites a cookie's domain when From is the whole domain,
// compared without case and without a leading dot, which is kept.
func domain(rules []TextRewrite, value string) (string, bool) {
	dot := ""
	name := value
	if strings.HasPrefix(name, ".") {
		dot, name = ".", name[1:]
	}
	for i := range rules {
		t := &rules[i]
		if t.re != nil {
			if v, ok := t.replaceRegex(value); ok {
				return v, true
			}
			continue
		}
		if strings.EqualFold(name, strings.TrimPrefix(t.from, ".")) {
			return dot + t.to, true
		}
	}
	return "", false
}

// apply rewrites the answer's headers h in place.
func (rw *ResponseRewrite) apply(h http.Header) {
	if len(rw.Redirects) > 0 {
		for i, v := range h["Location"] {
			if nv, ok := prefix(rw.Redirects, v); ok {
				h["Location"][i] = nv
			}
		}
		for i, v := range h["Refresh"] {
			if at := indexFold(v, "url="); at >= 0 {
				if nv, ok := prefix(rw.Redirects, v[at+4:]); ok {
					h["Refresh"][i] = v[:at+4] + nv
				}
			}
		}
	}
	if len(rw.CookieDomains) > 0 || len(rw.CookiePaths) > 0 {
		for i, v := range h["Set-Cookie"] {
			h["Set-Cookie"][i] = rw.cookie(v)
		}
	}
}

// cookie rewrites the Domain and Path attributes of one Set-Cookie value;
// attribute names are compared without case. The cookie's name and value
// (before the first ';') are never touched.
func (rw *ResponseRewrite) cookie(v string) string {
	start := strings.IndexByte(v, ';')
	if start < 0 {
		return v
	}
	var out strings.Builder
	done := 0 // v[:done] is in out
	for pos := start; pos < len(v); {
		end := strings.IndexByte(v[pos+1:], ';')
		if end < 0 {
			end = len(v)
		} else {
			end += pos + 1
		}
		attr := v[pos+1 : end]
		lead := len(attr) - len(strings.TrimLeft(attr, " \t"))
		name, value, found := strings.Cut(attr[lead:], "=")
		if found {
			var nv string
			var ok bool
			switch {
			case len(rw.CookieDomains) > 0 && strings.EqualFold(strings.TrimSpace(name), "domain"):
				nv, ok = domain(rw.CookieDomains, value)
			case len(rw.CookiePaths) > 0 && strings.EqualFold(strings.TrimSpace(name), "path"):
				nv, ok = prefix(rw.CookiePaths, value)
			}
			if ok {
				valueAt := pos + 1 + lead + len(name) + 1
				out.WriteString(v[done:valueAt])
				out.WriteString(nv)
				done = end
			}
		}
		pos = end
	}
	if done == 0 {
		return v
	}
	out.WriteString(v[done:])
	return out.String()
}

// indexFold returns the index of the first sub in s, compared without
// case for ASCII, or -1.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
