package router

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// conditions are the method, header, cookie and query matchers of a route;
// all must match.
type conditions struct {
	method  string
	headers []valueMatcher
	cookies []valueMatcher
	query   []valueMatcher
}

// valueMatcher tests a named value: present, equal to exact, or matching re.
type valueMatcher struct {
	name  string // canonical header name, cookie name or query parameter name
	exact string
	re    *regexp.Regexp
	// maxInput bounds the bytes re reads from one request, all the values
	// it tests together (0: no bound).
	maxInput int
}

func (c conditions) empty() bool {
	return c.method == "" && len(c.headers) == 0 && len(c.cookies) == 0 && len(c.query) == 0
}

func compileConditions(m *config.Match, maxInput int) (conditions, error) {
	c := conditions{method: m.Method}
	for _, h := range m.Headers {
		vm, err := newValueMatcher(http.CanonicalHeaderKey(h.Name), h.Exact, h.Regex, maxInput)
		if err != nil {
			return c, err
		}
		c.headers = append(c.headers, vm)
	}
	for _, ck := range m.Cookies {
		vm, err := newValueMatcher(ck.Name, ck.Exact, ck.Regex, maxInput)
		if err != nil {
			return c, err
		}
		c.cookies = append(c.cookies, vm)
	}
	for _, q := range m.Query {
		vm, err := newValueMatcher(q.Name, q.Exact, q.Regex, maxInput)
		if err != nil {
			return c, err
		}
		c.query = append(c.query, vm)
	}
	return c, nil
}

func newValueMatcher(name, exact, expr string, maxInput int) (valueMatcher, error) {
	vm := valueMatcher{name: name, exact: exact, maxInput: maxInput}
	if expr != "" {
		re, err := config.CompileValueRegex(expr)
		if err != nil {
			return vm, err
		}
		vm.re = re
	}
	return vm, nil
}

// test reports whether v matches; read counts the bytes the regex has
// read from the request so far, and the test fails with ErrValueTooLong
// rather than read more than maxInput.
func (vm *valueMatcher) test(v string, read *int) (bool, error) {
	switch {
	case vm.re != nil:
		if *read += len(v); vm.maxInput > 0 && *read > vm.maxInput {
			return false, ErrValueTooLong
		}
		return vm.re.MatchString(v), nil
	case vm.exact != "":
		return v == vm.exact, nil
	}
	return true, nil
}

// match tests the request; a nil request matches only empty conditions.
func (c *conditions) match(req *Request) (bool, error) {
	if req == nil {
		return c.empty(), nil
	}
	if c.method != "" && req.Method != c.method {
		return false, nil
	}
	for i := range c.headers {
		if ok, err := c.headers[i].matchHeader(req.Header); !ok {
			return false, err
		}
	}
	for i := range c.cookies {
		if ok, err := c.cookies[i].matchCookie(req.Header["Cookie"]); !ok {
			return false, err
		}
	}
	for i := range c.query {
		if ok, err := c.query[i].matchQuery(req.RawQuery); !ok {
			return false, err
		}
	}
	return true, nil
}

// matchHeader is true when any value of the header matches.
func (vm *valueMatcher) matchHeader(header http.Header) (bool, error) {
	read := 0
	for _, v := range header[vm.name] {
		if ok, err := vm.test(v, &read); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// matchCookie is true when a cookie of that name in any Cookie header
// matches.
func (vm *valueMatcher) matchCookie(lines []string) (bool, error) {
	read := 0
	for _, line := range lines {
		for line != "" {
			name, value, rest, ok := exchange.NextCookie(line)
			if ok && name == vm.name {
				if ok, err := vm.test(value, &read); ok || err != nil {
					return ok, err
				}
			}
			line = rest
		}
	}
	return false, nil
}

// matchQuery tests the first value of the parameter in a raw query string
// ("a=1&b=2"). Only the parameters of routes with query matchers are looked
// for, and a name or value is decoded (allocating) only when it holds an
// escape; a pair that does not decode is skipped, as url.ParseQuery skips
// it.
func (vm *valueMatcher) matchQuery(raw string) (bool, error) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		key, value, _ := strings.Cut(pair, "=")
		name, ok := unescapeQuery(key)
		if !ok || name != vm.name {
			continue
		}
		if value, ok = unescapeQuery(value); !ok {
			continue
		}
		read := 0
		return vm.test(value, &read)
	}
	return false, nil
}

// unescapeQuery decodes one name or value of a query, without allocating
// when there is nothing to decode.
func unescapeQuery(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, true
	}
	v, err := url.QueryUnescape(s)
	return v, err == nil
}
