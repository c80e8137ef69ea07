package config

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Limits of policies.
const (
	MaxSourceRanges = 1024
	MaxCORSMaxAge   = 365 * 24 * time.Hour
)

// validate checks the policies of a route with action a; regex is the
// route's compiled path regex, nil for other routes; srv is the server
// part (its listeners and allow_loopback_members).
func (p *Policies) validate(l *errorList, path string, a *Action, regex *regexp.Regexp, srv *Server) {
	if p == nil {
		return
	}
	p.validateForAction(l, path, a)
	validateRanges(l, path+".allow", p.Allow)
	validateRanges(l, path+".deny", p.Deny)
	if p.CORS != nil {
		p.CORS.validate(l, path+".cors")
	}
	if p.BasicAuth != nil {
		p.BasicAuth.validate(l, path+".basic_auth")
	}
	switch p.Satisfy {
	case "", SatisfyAll:
	case SatisfyAny:
		if p.BasicAuth != nil && p.ExternalAuth != nil {
			l.add(path+".satisfy", "any with both basic_auth and external_auth is not provided: a client refused by allow/deny would need to pass both")
		}
	default:
		l.add(path+".satisfy", "must be %q or %q, not %q", SatisfyAll, SatisfyAny, p.Satisfy)
	}
	if p.ExternalAuth != nil {
		p.ExternalAuth.validate(l, path+".external_auth", srv)
	}
	if p.WAF != nil {
		p.WAF.validate(l, path+".waf")
	}
	if p.RateLimit != nil {
		p.RateLimit.validate(l, path+".rate_limit")
	}
	if p.GlobalRateLimit != nil {
		p.GlobalRateLimit.validate(l, path+".global_rate_limit", srv)
	}
	if p.MaxBody != nil && *p.MaxBody < 0 {
		l.add(path+".max_body", "must be 0 (no limit) or more")
	}
	if p.Rewrite != nil {
		p.Rewrite.validate(l, path+".rewrite", regex)
	}
	p.RequestHeaders.validate(l, path+".request_headers", true)
	p.ResponseHeaders.validate(l, path+".response_headers", false)
	if t := p.Timeouts; t != nil {
		if t.Connect.Std() > MaxRouteConnectTimeout {
			l.add(path+".timeouts.connect", "must be at most %s", Duration(MaxRouteConnectTimeout))
		}
		if t.Response.Std() > MaxRouteResponseTimeout {
			l.add(path+".timeouts.response", "must be at most %s", Duration(MaxRouteResponseTimeout))
		}
		if t.Send < 0 || t.Send.Std() > MaxRouteResponseTimeout {
			l.add(path+".timeouts.send", "must be 0 (no bound) to %s", Duration(MaxRouteResponseTimeout))
		}
		t.validateBounds(l, path+".timeouts")
	}
	if p.ResponseRewrite != nil {
		p.ResponseRewrite.validate(l, path+".response_rewrite")
	}
	if b := p.Buffering; b != nil {
		if b.Bytes < 0 || b.Bytes > MaxBufferBytes {
			l.add(path+".buffering.bytes", "must be 0 (the default, %d) to %d", DefaultBufferBytes, MaxBufferBytes)
		}
		if b.HeadBytes != 0 && (b.HeadBytes < MinHeadBytes || b.HeadBytes > MaxHeadBytes) {
			l.add(path+".buffering.head_bytes", "must be 0 (the default) or %d to %d", MinHeadBytes, MaxHeadBytes)
		}
	}
	validateMirrors(l, path+".mirrors", p.Mirrors)
	if p.ErrorPages != nil {
		p.ErrorPages.validate(l, path+".error_pages")
	}
	if p.Retry != nil {
		p.Retry.validate(l, path+".retry")
	}
}

func (r *Retry) validate(l *errorList, path string) {
	checkErrorStatuses(l, path+".codes", r.Codes)
	if r.Attempts != nil && (*r.Attempts < 0 || *r.Attempts > MaxRetryAttempts) {
		l.add(path+".attempts", "must be 0..%d", MaxRetryAttempts)
	}
	if r.Within < 0 || r.Within.Std() > MaxRouteResponseTimeout {
		l.add(path+".within", "must be 0 (no bound) to %s", Duration(MaxRouteResponseTimeout))
	}
	if r.Backoff < 0 || r.Backoff.Std() > MaxRouteConnectTimeout {
		l.add(path+".backoff", "must be 0 to %s", Duration(MaxRouteConnectTimeout))
	}
}

func (rw *ResponseRewrite) validate(l *errorList, path string) {
	for _, list := range []struct {
		name  string
		rules []TextRewrite
	}{{"redirects", rw.Redirects}, {"cookie_domains", rw.CookieDomains}, {"cookie_paths", rw.CookiePaths}} {
		lpath := path + "." + list.name
		if len(list.rules) > MaxTextRewrites {
			l.add(lpath, "at most %d rules, got %d", MaxTextRewrites, len(list.rules))
		}
		for i, r := range list.rules {
			rpath := fmt.Sprintf("%s[%d]", lpath, i)
			if r.From == "" {
				l.add(rpath+".from", "must not be empty")
			}
			for _, v := range []struct{ name, value string }{{"from", r.From}, {"to", r.To}} {
				if err := ValidateHeaderValue(v.value); err != nil {
					l.add(rpath+"."+v.name, "%v", err)
				}
			}
			if !r.Regex {
				continue
			}
			re, err := CompileRewriteRegex(r.From)
			if err != nil {
				l.add(rpath+".from", "not a regular expression: %v", err)
				continue
			}
			if n := maxSubmatchRef(r.To); n > re.NumSubexp() {
				l.add(rpath+".to", "refers to $%d, but from has %d submatches", n, re.NumSubexp())
			}
		}
	}
}

// maxSubmatchRef returns the largest $1..$9 a replacement refers to.
func maxSubmatchRef(s string) int {
	n := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '$' && s[i+1] >= '1' && s[i+1] <= '9' {
			n = max(n, int(s[i+1]-'0'))
		}
	}
	return n
}

// validateBounds checks request and backend_request.
func (t *Timeouts) validateBounds(l *errorList, path string) {
	for _, d := range []struct {
		name  string
		value Duration
	}{{"request", t.Request}, {"backend_request", t.BackendRequest}} {
		if d.value < 0 || d.value.Std() > MaxRouteResponseTimeout {
			l.add(path+"."+d.name, "must be 0 (no bound) to %s", Duration(MaxRouteResponseTimeout))
		}
	}
	if t.Request > 0 && t.BackendRequest > t.Request {
		l.add(path+".backend_request", "must be at most request (%s): the request timeout covers every try", t.Request)
	}
}

// validateMirrors checks the mirrors' count and fractions; the tenant
// checks their pools.
func validateMirrors(l *errorList, path string, mirrors []Mirror) {
	if len(mirrors) > MaxMirrors {
		l.add(path, "at most %d mirrors, got %d", MaxMirrors, len(mirrors))
	}
	for i, m := range mirrors {
		m.validateCopy(l, fmt.Sprintf("%s[%d]", path, i))
		f := m.Fraction
		if f == nil {
			continue
		}
		fpath := fmt.Sprintf("%s[%d].fraction", path, i)
		switch {
		case f.Of() > 1_000_000:
			l.add(fpath+".denominator", "must be 1..1000000")
		case f.Numerator > f.Of():
			l.add(fpath+".numerator", "must be at most the denominator (%d)", f.Of())
		}
	}
}

// validateCopy checks what a mirror changes in its copies: the Host, and
// the path, which is fixed or the client's.
func (m *Mirror) validateCopy(l *errorList, path string) {
	if m.Host != "" {
		if err := CheckHostPort(m.Host); err != nil {
			l.add(path+".host", "%v", err)
		}
	}
	if m.Path != "" {
		l.addErr(path+".path", validateTargetPath(m.Path))
		if m.RequestURI {
			l.add(path, "path and request_uri exclude each other")
		}
	}
}

// validateForAction refuses policies the action would never run: a
// redirect answers before every policy, and a fixed response sends nothing
// to a member to rewrite, change or time.
func (p *Policies) validateForAction(l *errorList, path string, a *Action) {
	switch {
	case a.Redirect != nil && !p.IsZero():
		l.add(path, "a redirect answers before any policy runs, so these would protect nothing; put them on the routes the redirect leads to")
	case a.Respond != nil:
		if p.Rewrite != nil {
			l.add(path+".rewrite", "a fixed response sends nothing to a member to rewrite")
		}
		if p.RequestHeaders != nil {
			l.add(path+".request_headers", "a fixed response sends nothing to a member")
		}
		if p.Timeouts != nil {
			l.add(path+".timeouts", "a fixed response waits for no member")
		}
		if len(p.Mirrors) > 0 {
			l.add(path+".mirrors", "a fixed response sends nothing to a member to copy")
		}
		if p.Retry != nil {
			l.add(path+".retry", "a fixed response sends nothing to a member to try again")
		}
		if p.ResponseRewrite != nil {
			l.add(path+".response_rewrite", "a fixed response has no member's answer to rewrite")
		}
		if p.Buffering != nil {
			l.add(path+".buffering", "a fixed response sends nothing to a member")
		}
		if p.ErrorPages != nil {
			l.add(path+".error_pages", "a fixed response has no member's answer to replace")
		}
	}
}

// IsZero reports whether no policy is set (TestPoliciesIsZero keeps the
// list of fields true).
func (p *Policies) IsZero() bool {
	return len(p.Allow) == 0 && len(p.Deny) == 0 && p.CORS == nil && p.BasicAuth == nil && p.ExternalAuth == nil && p.WAF == nil && p.RateLimit == nil && p.GlobalRateLimit == nil && p.Satisfy == "" && p.MaxBody == nil &&
		p.Rewrite == nil && p.RequestHeaders == nil && p.ResponseHeaders == nil && p.Timeouts == nil && len(p.Mirrors) == 0 && p.Retry == nil &&
		p.ResponseRewrite == nil && p.Buffering == nil && p.ErrorPages == nil
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

// CheckRanges checks a list of client address ranges as allow and deny
// take them: at most MaxSourceRanges entries, each a CIDR or an address
// (ParsePrefix). The error names the first bad entry, counted from 1.
func CheckRanges(ranges []string) error {
	if len(ranges) > MaxSourceRanges {
		return fmt.Errorf("%d entries, more than %d", len(ranges), MaxSourceRanges)
	}
	for i, r := range ranges {
		if _, err := ParsePrefix(r); err != nil {
			return fmt.Errorf("entry %d: %v", i+1, err)
		}
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
	null := false
	for i, o := range c.AllowOrigins {
		switch {
		case o == "*":
			wildcard = true
		case o == "null":
			null = true
		case !originRE.MatchString(o):
			l.add(fmt.Sprintf("%s.allow_origins[%d]", path, i), "%q is not an origin: write scheme://host[:port], with at most a *. wildcard as the first label, or *", o)
		}
	}
	switch {
	case c.AllowCredentials && wildcard && !c.GatewayAPI:
		l.add(path+".allow_credentials", `credentials cannot be allowed for the origin "*" (browsers refuse it, and it would let any site read authenticated answers); list the origins`)
	case c.AllowCredentials && null:
		l.add(path+".allow_credentials", `credentials cannot be allowed for the origin "null": any page can send it from a sandboxed frame`)
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

// UsesCaptures reports whether a rewrite path or forwarded prefix refers
// to submatches.
func (r *Rewrite) UsesCaptures() bool {
	return r != nil && (captureRef.MatchString(r.Path) || captureRef.MatchString(r.ForwardedPrefix))
}

// validateCaptures checks the $1..$9 of a rewrite template against the
// route's regex (nil for a route whose path is not one).
func validateCaptures(l *errorList, path, template string, regex *regexp.Regexp) {
	if !captureRef.MatchString(template) {
		return
	}
	switch {
	case regex == nil:
		l.add(path, "$1..$9 refer to the submatches of a regex route; this route's path is not a regex")
	case maxCaptureRef(template) > regex.NumSubexp():
		l.add(path, "$%d refers to a submatch the route's regex does not have (it has %d)", maxCaptureRef(template), regex.NumSubexp())
	}
}

func (r *Rewrite) validate(l *errorList, path string, regex *regexp.Regexp) {
	if r.Path == "" && r.Host == "" && r.PathPrefix == nil {
		l.add(path, "path, path_prefix or host is required")
	}
	validatePathModifier(l, path, "", r.PathPrefix)
	if r.Path != "" && r.PathPrefix != nil {
		l.add(path, "path and path_prefix exclude each other")
	}
	if r.Path != "" {
		switch {
		case !strings.HasPrefix(r.Path, "/"):
			l.add(path+".path", "must start with /")
		case strings.ContainsAny(r.Path, "?#"):
			l.add(path+".path", "must not hold '?' or '#': the query string of the request is kept")
		case ValidateHeaderValue(r.Path) != nil:
			l.add(path+".path", "must not hold control characters")
		default:
			validateCaptures(l, path+".path", r.Path, regex)
		}
	}
	if r.ForwardedPrefix != "" {
		switch {
		case r.Path == "":
			l.add(path+".forwarded_prefix", "requires path: the header goes with a rewritten path, as in ingress-nginx")
		case ValidateHeaderValue(r.ForwardedPrefix) != nil:
			l.add(path+".forwarded_prefix", "must not hold control characters")
		default:
			validateCaptures(l, path+".forwarded_prefix", r.ForwardedPrefix, regex)
		}
	}
	if r.Host != "" {
		if err := CheckHostPort(r.Host); err != nil {
			l.add(path+".host", "%v", err)
		}
	}
}

// maxCaptureRef is the largest $N of a rewrite path.
func maxCaptureRef(p string) int {
	n := 0
	for _, ref := range captureRef.FindAllString(p, -1) {
		n = max(n, int(ref[1]-'0'))
	}
	return n
}

// checkErrorStatuses refuses, in a list of statuses at path, those that
// are not 400..599 and those listed twice.
func checkErrorStatuses(l *errorList, path string, codes []int) {
	seen := map[int]bool{}
	for i, code := range codes {
		cpath := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case code < 400 || code > 599:
			l.add(cpath, "must be 400..599, not %d", code)
		case seen[code]:
			l.add(cpath, "%d is listed twice", code)
		}
		seen[code] = true
	}
}

// CheckHostPort accepts a DNS name (no wildcard), an IPv4 address or a
// bracketed IPv6 address without zone, each with an optional port
// 1..65535: what a Host header (rewrite.host, a mirror's host) may be.
func CheckHostPort(hp string) error {
	if strings.ContainsAny(hp, "/?#@ \t") {
		return fmt.Errorf("%q is not host or host:port: it holds a scheme, path, user or space", hp)
	}
	host, bracketed := hp, strings.HasPrefix(hp, "[")
	if h, port, err := net.SplitHostPort(hp); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: the port must be 1..65535", hp)
		}
		host = h
	} else if bracketed && strings.HasSuffix(hp, "]") {
		host = hp[1 : len(hp)-1]
	} else if strings.Contains(hp, ":") {
		return fmt.Errorf("%q is not host or host:port (an IPv6 address goes in brackets)", hp)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" || ip.Is4() == bracketed {
			return fmt.Errorf("%q: an IPv4 address goes without brackets, an IPv6 address in brackets and without zone", hp)
		}
		return nil
	}
	if strings.HasPrefix(host, "*") {
		return fmt.Errorf("%q is a wildcard; a Host header names one host", hp)
	}
	if bracketed || ValidateDomain(strings.ToLower(host)) != nil {
		return fmt.Errorf("%q is not a DNS name (labels of letters, digits and '-', separated by '.') or an IP address, with an optional port", hp)
	}
	return nil
}

// unchangeableHeaders decide the framing or are hop-by-hop: header changes
// may not touch them in either direction.
var unchangeableHeaders = map[string]bool{
	"host": true, "connection": true, "content-length": true, "transfer-encoding": true,
	"te": true, "upgrade": true, "keep-alive": true, "trailer": true, "proxy-connection": true,
	"proxy-authorization": true, "proxy-authenticate": true,
}

// proxySetHeaders are the request headers ramjetd sets or removes itself
// (forwarding information, the request id, and names the proxy never
// forwards): request header changes may not set them, so no configuration
// can forge the client's address or scheme.
var proxySetHeaders = map[string]bool{
	"x-forwarded-for": true, "x-forwarded-host": true, "x-forwarded-proto": true, "x-forwarded-port": true,
	"x-forwarded-scheme": true, "x-forwarded-ssl": true, "x-original-forwarded-for": true, "x-scheme": true,
	"x-real-ip": true, "forwarded": true, "x-request-id": true, "proxy": true,
}

func (h *HeaderChanges) validate(l *errorList, path string, request bool) {
	if h == nil {
		return
	}
	check := func(p, name string) {
		lower := strings.ToLower(name)
		switch err := ValidateHeaderName(name); {
		case err != nil:
			l.add(p, "%v", err)
		case unchangeableHeaders[lower]:
			l.add(p, "%s cannot be changed: it is hop-by-hop or decides the framing (use rewrite.host for Host)", name)
		case request && proxySetHeaders[lower]:
			l.add(p, "%s cannot be changed: ramjetd sets it from what it knows of the client", name)
		case request && strings.Contains(name, "_"):
			l.add(p, "%s cannot be set: headers with '_' are not forwarded (as in ingress-nginx)", name)
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

// CheckResponseHeader checks a header that response_headers may set, as
// the configuration's validation does: a valid name that is not hop-by-hop
// and does not decide the framing, and a value without control characters.
func CheckResponseHeader(name, value string) error {
	switch err := ValidateHeaderName(name); {
	case err != nil:
		return err
	case unchangeableHeaders[strings.ToLower(name)]:
		return fmt.Errorf("%s cannot be changed: it is hop-by-hop or decides the framing", name)
	}
	return ValidateHeaderValue(value)
}
