package router

import (
	"net/http"
	"regexp"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// conditions are the header and cookie matchers of a route; all must match.
type conditions struct {
	headers []valueMatcher
	cookies []valueMatcher
}

// valueMatcher tests a named value: present, equal to exact, or matching re.
type valueMatcher struct {
	name  string // canonical header name, or cookie name
	exact string
	re    *regexp.Regexp
	// maxInput bounds the bytes re reads from one request, all the values
	// it tests together (0: no bound).
	maxInput int
}

func (c conditions) empty() bool { return len(c.headers) == 0 && len(c.cookies) == 0 }

func compileConditions(m *config.Match, maxInput int) (conditions, error) {
	var c conditions
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

func (c conditions) match(header http.Header) (bool, error) {
	for i := range c.headers {
		if ok, err := c.headers[i].matchHeader(header); !ok {
			return false, err
		}
	}
	for i := range c.cookies {
		if ok, err := c.cookies[i].matchCookie(header["Cookie"]); !ok {
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
