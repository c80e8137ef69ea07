package config

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"
)

// Limits of policies.
const (
	MaxSourceRanges = 1024
	MaxCORSMaxAge   = 365 * 24 * time.Hour
)

func (p *Policies) validate(l *errorList, path string, regexMatch bool) {
	if p == nil {
		return
	}
	if p.AppRoot != "" {
		l.addErr(path+".app_root", validateLocalPath(p.AppRoot))
	}
	validateRanges(l, path+".allow", p.Allow)
	validateRanges(l, path+".deny", p.Deny)
	if p.CORS != nil {
		p.CORS.validate(l, path+".cors")
	}
	if p.BasicAuth != nil {
		p.BasicAuth.validate(l, path+".basic_auth")
	}
	if p.MaxBody != nil && *p.MaxBody < 0 {
		l.add(path+".max_body", "must be 0 (no limit) or more")
	}
	if p.Rewrite != nil {
		p.Rewrite.validate(l, path+".rewrite", regexMatch)
	}
	p.RequestHeaders.validate(l, path+".request_headers")
	p.ResponseHeaders.validate(l, path+".response_headers")
	if t := p.Timeouts; t != nil {
		if t.Connect.Std() > 5*time.Minute {
			l.add(path+".timeouts.connect", "must be at most 5m")
		}
		if t.Response.Std() > 24*time.Hour {
			l.add(path+".timeouts.response", "must be at most 24h")
		}
	}
}

// validateLocalPath checks a path used as a redirect target on the same
// host: absolute, without a scheme, control characters or whitespace.
func validateLocalPath(p string) error {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return fmt.Errorf("%q must be a path starting with a single /", p)
	}
	if err := ValidateHeaderValue(p); err != nil {
		return err
	}
	if strings.ContainsAny(p, " \t") {
		return fmt.Errorf("%q must not hold whitespace", p)
	}
	return nil
}

func validateRanges(l *errorList, path string, ranges []string) {
	if len(ranges) > MaxSourceRanges {
		l.add(path, "at most %d entries, got %d", MaxSourceRanges, len(ranges))
		return
	}
	for i, r := range ranges {
		if _, err := ParsePrefix(strings.TrimSpace(r)); err != nil {
			l.add(fmt.Sprintf("%s[%d]", path, i), "%v", err)
		}
	}
}

// originRE is an origin as CORS sends it: a lower-case scheme, a host
// (optionally with one left-most "*." wildcard label) and an optional port.
var originRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$`)

func (c *CORS) validate(l *errorList, path string) {
	wildcard := len(c.AllowOrigins) == 0
	for i, o := range c.AllowOrigins {
		switch {
		case o == "*":
			wildcard = true
		case o == "null":
		case !originRE.MatchString(o):
			l.add(fmt.Sprintf("%s.allow_origins[%d]", path, i), "%q is not an origin: write scheme://host[:port], with at most a *. wildcard as the first label, or *", o)
		}
	}
	if c.AllowCredentials && wildcard {
		l.add(path+".allow_credentials", `credentials cannot be allowed for the origin "*" (browsers refuse it, and it would let any site read authenticated answers); list the origins`)
	}
	for i, m := range c.AllowMethods {
		if ValidateHeaderName(m) != nil {
			l.add(fmt.Sprintf("%s.allow_methods[%d]", path, i), "%q is not a method", m)
		}
	}
	validateHeaderNames(l, path+".allow_headers", c.AllowHeaders, false)
	validateHeaderNames(l, path+".expose_headers", c.ExposeHeaders, true)
	if c.MaxAge.Std() > MaxCORSMaxAge {
		l.add(path+".max_age", "must be at most %s", MaxCORSMaxAge)
	}
}

func validateHeaderNames(l *errorList, path string, names []string, starAllowed bool) {
	for i, n := range names {
		if n == "*" && starAllowed {
			continue
		}
		if ValidateHeaderName(n) != nil {
			l.add(fmt.Sprintf("%s[%d]", path, i), "%q is not a header name", n)
		}
	}
}

func (b *BasicAuth) validate(l *errorList, path string) {
	if b.File == "" {
		l.add(path+".file", "is required")
	}
	if err := ValidateHeaderValue(b.Realm); err != nil {
		l.add(path+".realm", "%v", err)
	} else if strings.ContainsAny(b.Realm, `"\`) {
		l.add(path+".realm", `must not hold " or \`)
	}
}

// captureRef finds $1..$9 in a rewrite target.
var captureRef = regexp.MustCompile(`\$[1-9]`)

// UsesCaptures reports whether a rewrite path refers to submatches.
func (r *Rewrite) UsesCaptures() bool { return r != nil && captureRef.MatchString(r.Path) }

func (r *Rewrite) validate(l *errorList, path string, regexMatch bool) {
	if r.Path == "" && r.Host == "" {
		l.add(path, "path or host is required")
	}
	if r.Path != "" {
		switch {
		case !strings.HasPrefix(r.Path, "/"):
			l.add(path+".path", "must start with /")
		case strings.ContainsAny(r.Path, "?#"):
			l.add(path+".path", "must not hold '?' or '#': the query string of the request is kept")
		case ValidateHeaderValue(r.Path) != nil:
			l.add(path+".path", "must not hold control characters")
		case r.UsesCaptures() && !regexMatch:
			l.add(path+".path", "$1..$9 refer to the submatches of a regex route; this route's path is not a regex")
		}
	}
	if r.Host != "" {
		host := r.Host
		if h, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
			host = h
		}
		if net.ParseIP(strings.Trim(host, "[]")) == nil && ValidateDomain(strings.ToLower(host)) != nil || strings.HasPrefix(host, "*") {
			l.add(path+".host", "%q is not a host name or address", r.Host)
		}
	}
}

// unchangeableHeaders are set by the proxy itself or decide the framing;
// header changes may not touch them.
var unchangeableHeaders = map[string]bool{
	"host": true, "connection": true, "content-length": true, "transfer-encoding": true,
	"te": true, "upgrade": true, "keep-alive": true, "trailer": true, "proxy-connection": true,
}

func (h *HeaderChanges) validate(l *errorList, path string) {
	if h == nil {
		return
	}
	check := func(p, name string) {
		if err := ValidateHeaderName(name); err != nil {
			l.add(p, "%v", err)
		} else if unchangeableHeaders[strings.ToLower(name)] {
			l.add(p, "%s cannot be changed: the proxy sets it (use rewrite.host for Host)", name)
		}
	}
	for i, hd := range h.Set {
		check(fmt.Sprintf("%s.set[%d].name", path, i), hd.Name)
		l.addErr(fmt.Sprintf("%s.set[%d].value", path, i), ValidateHeaderValue(hd.Value))
	}
	for i, hd := range h.Add {
		check(fmt.Sprintf("%s.add[%d].name", path, i), hd.Name)
		l.addErr(fmt.Sprintf("%s.add[%d].value", path, i), ValidateHeaderValue(hd.Value))
	}
	for i, name := range h.Remove {
		check(fmt.Sprintf("%s.remove[%d]", path, i), name)
	}
}
