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
}

func (c conditions) empty() bool { return len(c.headers) == 0 && len(c.cookies) == 0 }

func compileConditions(m *config.Match) (conditions, error) {
	var c conditions
	for _, h := range m.Headers {
		vm, err := newValueMatcher(http.CanonicalHeaderKey(h.Name), h.Exact, h.Regex)
		if err != nil {
			return c, err
		}
		c.headers = append(c.headers, vm)
	}
	for _, ck := range m.Cookies {
		vm, err := newValueMatcher(ck.Name, ck.Exact, ck.Regex)
		if err != nil {
			return c, err
		}
		c.cookies = append(c.cookies, vm)
	}
	return c, nil
}

func newValueMatcher(name, exact, expr string) (valueMatcher, error) {
	vm := valueMatcher{name: name, exact: exact}
	if expr != "" {
		re, err := config.CompileValueRegex(expr)
		if err != nil {
			return vm, err
		}
		vm.re = re
	}
	return vm, nil
}

func (vm *valueMatcher) test(v string) bool {
	switch {
	case vm.re != nil:
		return vm.re.MatchString(v)
	case vm.exact != "":
		return v == vm.exact
	}
	return true
}

func (c conditions) match(header http.Header) bool {
	for i := range c.headers {
		if !c.headers[i].matchHeader(header) {
			return false
		}
	}
	for i := range c.cookies {
		if !c.cookies[i].matchCookie(header["Cookie"]) {
			return false
		}
	}
	return true
}

// matchHeader is true when any value of the header matches.
func (vm *valueMatcher) matchHeader(header http.Header) bool {
	for _, v := range header[vm.name] {
		if vm.test(v) {
			return true
		}
	}
	return false
}

// matchCookie is true when a cookie of that name in any Cookie header
// matches.
func (vm *valueMatcher) matchCookie(lines []string) bool {
	for _, line := range lines {
		for line != "" {
			name, value, rest, ok := exchange.NextCookie(line)
			if ok && name == vm.name && vm.test(value) {
				return true
			}
			line = rest
		}
	}
	return false
}
