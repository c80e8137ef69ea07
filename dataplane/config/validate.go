package config

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Limits of values, shared with the code that applies them.
const (
	DefaultMaxHeaderBytes            = 64 << 10
	DefaultReadHeaderTimeout         = 10 * time.Second
	DefaultIdleTimeout               = 60 * time.Second
	DefaultReadBodyTimeout           = 60 * time.Second
	DefaultMaxRequestBodyBytes       = 10 << 20
	DefaultHTTP2MaxConcurrentStreams = 128
	DefaultSendTimeout               = 60 * time.Second
	DefaultLingeringTime             = 30 * time.Second
	DefaultLingeringTimeout          = 5 * time.Second
	DefaultRetries                   = 2
	MaxRetries                       = 10
	DefaultConnectTimeout            = 5 * time.Second
	DefaultResponseTimeout           = 60 * time.Second
	DefaultPassthroughIdleTimeout    = time.Hour
	DefaultAffinityCookie            = "INGRESSCOOKIE"
	MaxMemberWeight                  = 1000
	MaxSubsetSize                    = 1000
	MaxNameLength                    = 63
	MaxRespondBody                   = 64 << 10
	MaxValueLength                   = 4096
)

// FieldError is one problem of a configuration, at a field path such as
// tenants.ingress.pools.p_x.retries.
type FieldError struct {
	Path    string
	Message string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Message }

// errorList collects field errors in the order they are found.
type errorList struct{ errs *multierror.Error }

func (l *errorList) add(path, format string, args ...any) {
	l.errs = multierror.Append(l.errs, &FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// addErr records err at path when it is not nil.
func (l *errorList) addErr(path string, err error) {
	if err != nil {
		l.add(path, "%s", err.Error())
	}
}

func (l *errorList) result() error {
	if l.errs == nil {
		return nil
	}
	l.errs.ErrorFormat = ListFormat
	return l.errs
}

// Errors returns the individual errors of an error returned by Validate
// (or the error itself when it is a single one).
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	if m, ok := err.(*multierror.Error); ok {
		return m.Errors
	}
	return []error{err}
}

// Validate checks the whole configuration without touching files and
// reports every problem, each with the path of its field.
func (c *Config) Validate() error {
	var l errorList
	c.Server.validate(&l)
	budget := regexBudget{perApplication: c.Server.Limits.RegexInstructionBudget()}
	holders := domainHolders{}
	poolOwner := map[string]string{}
	for _, tname := range sortedKeys(c.Tenants) {
		t := c.Tenants[tname]
		path := "tenants." + tname
		l.addErr(path, ValidateName(tname))
		if t == nil {
			l.add(path, "is empty")
			continue
		}
		for _, pname := range sortedKeys(t.Pools) {
			if other, dup := poolOwner[pname]; dup {
				l.add(path+".pools."+pname, "pool name already used by tenant %s; pool names are unique across tenants", other)
			}
			poolOwner[pname] = tname
		}
		t.validate(&l, path, &budget, &c.Server)
		for _, aname := range sortedKeys(t.Applications) {
			app := t.Applications[aname]
			if app == nil {
				continue
			}
			apath := path + ".applications." + aname
			scope := c.Server.validateScope(&l, apath, app.Listeners)
			for i, d := range app.Domains {
				holders.claim(&l, fmt.Sprintf("%s.domains[%d]", apath, i), d, holder{tname + "/" + aname, len(app.Listeners) > 0}, scope)
			}
		}
	}
	c.validateZones(&l)
	return l.result()
}

// domainHolders are the applications holding each domain on each
// listener.
type domainHolders map[[2]string]holder

// holder is an application holding a domain: "tenant/application", and
// whether it names its listeners.
type holder struct {
	where  string
	scoped bool
}

// claim holds domain for app on the listeners of scope, and reports the
// first listener where another application holds it already. The
// catch-all "*" is a domain like the others here: at most one application
// holds it on a listener.
func (h domainHolders) claim(l *errorList, path, domain string, app holder, scope []string) {
	reported := false
	for _, ln := range scope {
		key := [2]string{ln, domain}
		other, dup := h[key]
		if !dup {
			h[key] = app
			continue
		}
		if other.where == app.where || reported {
			continue
		}
		reported = true
		where := other.where
		if app.scoped || other.scoped {
			where += " on listener " + ln
		}
		if domain == "*" {
			l.add(path, `the catch-all domain "*" is already held by %s; at most one application may hold it on a listener`, where)
		} else {
			l.add(path, "domain %s is already served by %s", domain, where)
		}
	}
}

// validateScope checks an application's listeners and returns the
// listeners it is served on: those, or every listener when it names none.
func (s *Server) validateScope(l *errorList, path string, names []string) []string {
	if len(names) == 0 {
		return sortedKeys(s.Listeners)
	}
	seen := map[string]bool{}
	for i, name := range names {
		p := fmt.Sprintf("%s.listeners[%d]", path, i)
		switch {
		case s.Listeners[name] == nil:
			l.add(p, "listener %q is not in server.listeners", name)
		case seen[name]:
			l.add(p, "listener %s is named twice", name)
		}
		seen[name] = true
	}
	return names
}

func (s *Server) validate(l *errorList) {
	if len(s.Listeners) == 0 {
		l.add("server.listeners", "at least one listener is required")
	}
	addresses := map[string]string{}
	claim := func(path, addr string) {
		if addr == "" {
			return
		}
		if err := validateListenAddress(addr); err != nil {
			l.add(path, "%v", err)
			return
		}
		_, port, _ := net.SplitHostPort(addr)
		if port != "0" {
			if other, dup := addresses[addr]; dup {
				l.add(path, "%s is already used by %s", addr, other)
			}
			addresses[addr] = path
		}
	}
	for _, name := range sortedKeys(s.Listeners) {
		ln := s.Listeners[name]
		path := "server.listeners." + name
		l.addErr(path, ValidateName(name))
		if ln == nil || ln.Address == "" {
			l.add(path+".address", "is required")
			continue
		}
		claim(path+".address", ln.Address)
		if ln.TLS != nil && (ln.TLS.CertFile == "") != (ln.TLS.KeyFile == "") {
			l.add(path+".tls", "cert_file and key_file go together (leave both empty for a generated certificate)")
		}
		if ln.TLS != nil && ln.H2C {
			l.add(path+".h2c", "is only for a listener without tls: with TLS, ALPN chooses HTTP/2")
		}
	}
	claim("server.health.address", s.Health.Address)
	if strings.ContainsRune(s.Admin.Socket, 0) {
		l.add("server.admin.socket", "must not contain NUL")
	}
	s.Limits.validate(l)
	if s.Memcached != nil {
		s.Memcached.validate(l, "server.memcached")
	}
	for i, p := range s.TrustedProxies {
		if _, err := ParsePrefix(p); err != nil {
			l.add(fmt.Sprintf("server.trusted_proxies[%d]", i), "%v", err)
		}
	}
}

func validateListenAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q must be a number 0..65535", port)
	}
	if host != "" && net.ParseIP(host) == nil && (strings.HasPrefix(host, "*") || ValidateDomain(host) != nil) {
		return fmt.Errorf("host %q is neither an IP address nor a host name", host)
	}
	return nil
}

func (lim *Limits) validate(l *errorList) {
	if lim.MaxHeaderBytes != 0 && (lim.MaxHeaderBytes < 1<<10 || lim.MaxHeaderBytes > 1<<20) {
		l.add("server.limits.max_header_bytes", "must be 1KiB..1MiB")
	}
	if lim.ReadHeaderTimeout.Std() > 5*time.Minute {
		l.add("server.limits.read_header_timeout", "must be at most 5m")
	}
	if lim.IdleTimeout.Std() > time.Hour {
		l.add("server.limits.idle_timeout", "must be at most 1h")
	}
	if lim.ReadBodyTimeout.Std() > time.Hour {
		l.add("server.limits.read_body_timeout", "must be at most 1h")
	}
	if lim.SendTimeout.Std() > time.Hour {
		l.add("server.limits.send_timeout", "must be at most 1h")
	}
	if lim.LingeringTime.Std() > 5*time.Minute {
		l.add("server.limits.lingering_time", "must be at most 5m")
	}
	if lim.LingeringTimeout.Std() > lim.LingeringTime.Or(DefaultLingeringTime) {
		l.add("server.limits.lingering_timeout", "must be at most lingering_time (%s)", lim.LingeringTime.Or(DefaultLingeringTime))
	}
	if lim.MaxRegexInputBytes != 0 && (lim.MaxRegexInputBytes < 1<<10 || lim.MaxRegexInputBytes > 1<<20) {
		l.add("server.limits.max_regex_input_bytes", "must be 1KiB..1MiB")
	}
	if n := lim.RateLimitZoneClients; n != 0 && (n < 1024 || n > 1<<24) {
		l.add("server.limits.rate_limit_zone_clients", "must be 1024..16777216")
	}
	if lim.HTTP2MaxConcurrentStreams > 10000 {
		l.add("server.limits.http2_max_concurrent_streams", "must be 1..10000")
	}
}

// ParsePrefix parses a CIDR or a single address (as a /32 or /128).
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR", s)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			// Peers are compared unmapped, so must the prefix be.
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither an address nor a CIDR", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// validate checks the tenant; srv is the server part, whose listeners and
// allow_loopback_members some policies depend on.
func (t *Tenant) validate(l *errorList, path string, budget *regexBudget, srv *Server) {
	for _, pname := range sortedKeys(t.Pools) {
		ppath := path + ".pools." + pname
		l.addErr(ppath, ValidateName(pname))
		if t.Pools[pname] == nil {
			l.add(ppath, "is empty")
			continue
		}
		t.Pools[pname].validate(l, ppath, srv.Admin.AllowLoopbackMembers)
	}
	if t.DefaultRoute != nil {
		t.validateAction(l, path+".default_route.action", &t.DefaultRoute.Action)
		t.DefaultRoute.Policies.validate(l, path+".default_route.policies", &t.DefaultRoute.Action, nil, srv)
		t.checkPolicyPools(l, path+".default_route.policies", t.DefaultRoute.Policies)
		validatePrefixReplacement(l, path+".default_route", PathMatch{}, &t.DefaultRoute.Action, t.DefaultRoute.Policies)
	}
	for _, aname := range sortedKeys(t.Applications) {
		apath := path + ".applications." + aname
		l.addErr(apath, ValidateName(aname))
		app := t.Applications[aname]
		if app == nil {
			l.add(apath, "is empty")
			continue
		}
		t.validateApplication(l, apath, app, budget, srv)
	}
}

func (t *Tenant) validateApplication(l *errorList, path string, app *Application, budget *regexBudget, srv *Server) {
	if len(app.Domains) == 0 {
		l.add(path+".domains", "at least one domain is required")
	}
	seen := map[string]bool{}
	for i, d := range app.Domains {
		dpath := fmt.Sprintf("%s.domains[%d]", path, i)
		if seen[d] {
			l.add(dpath, "%s is listed twice", d)
		}
		seen[d] = true
		if d != "*" {
			l.addErr(dpath, ValidateDomain(d))
		}
	}
	if app.AppRoot != "" {
		l.addErr(path+".app_root", validateLocalPath(app.AppRoot))
	}
	app.HTTPSRedirectTarget.validate(l, path+".https_redirect_target")
	if app.TLS != nil {
		if app.TLS.CertFile == "" || app.TLS.KeyFile == "" {
			l.add(path+".tls", "cert_file and key_file are required")
		}
		if len(app.Domains) == 1 && app.Domains[0] == "*" {
			l.add(path+".tls", "the catch-all application has no name to match a certificate to; set the listener's default certificate instead")
		}
	}
	if app.ClientAuth != nil {
		app.ClientAuth.validate(l, path+".client_auth", app.TLS != nil)
	}
	if app.SNIGroup != "" {
		l.addErr(path+".sni_group", ValidateName(app.SNIGroup))
	}
	if pt := app.Passthrough; pt != nil {
		if pt.Pool == "" {
			l.add(path+".passthrough.pool", "is required")
		} else {
			t.checkPoolRef(l, path+".passthrough.pool", pt.Pool)
		}
		if pt.IdleTimeout < 0 {
			l.add(path+".passthrough.idle_timeout", "must not be negative")
		}
	}
	firstWithMatch := map[string]int{}
	budget.application = 0
	over := -1 // the route whose regexes bring the application over its budget
	for i, r := range app.Routes {
		rpath := fmt.Sprintf("%s.routes[%d]", path, i)
		if r == nil {
			l.add(rpath, "is empty")
			continue
		}
		key := r.Match.Key()
		if first, dup := firstWithMatch[key]; dup {
			l.add(rpath+".match", "the same match as routes[%d]; this route would never be used", first)
		} else {
			firstWithMatch[key] = i
		}
		r.Match.validate(l, rpath+".match", budget)
		if over < 0 && budget.application > budget.perApplication {
			over = i
		}
		t.validateAction(l, rpath+".action", &r.Action)
		validatePrefixReplacement(l, rpath, r.Match.Path, &r.Action, r.Policies)
		var regex *regexp.Regexp
		if r.Match.Path.Regex != "" {
			regex, _ = CompilePathRegex(r.Match.Path.Regex)
		}
		r.Policies.validate(l, rpath+".policies", &r.Action, regex, srv)
		t.checkPolicyPools(l, rpath+".policies", r.Policies)
		r.HTTPSRedirectTarget.validate(l, rpath+".https_redirect_target")
		if len(r.Name) > MaxValueLength || strings.ContainsAny(r.Name, "\r\n\x00") {
			l.add(rpath+".name", "must be at most %d bytes without control characters", MaxValueLength)
		}
	}
	if app.DefaultRoute != nil {
		t.validateAction(l, path+".default_route.action", &app.DefaultRoute.Action)
		validatePrefixReplacement(l, path+".default_route", PathMatch{}, &app.DefaultRoute.Action, app.DefaultRoute.Policies)
		app.DefaultRoute.Policies.validate(l, path+".default_route.policies", &app.DefaultRoute.Action, nil, srv)
		t.checkPolicyPools(l, path+".default_route.policies", app.DefaultRoute.Policies)
	}
	if over >= 0 {
		l.add(fmt.Sprintf("%s.routes[%d].match", path, over), "with %s, the regexes of this application compile to more than the %d instructions one request may run "+
			"(%d instruction-bytes over server.limits.max_regex_input_bytes), %d in all: remove or simplify regex routes, or lower max_regex_input_bytes",
			describeRegexes(&app.Routes[over].Match), budget.perApplication, RegexWorkBudget, budget.application)
	}
}

// describeRegexes names the regexes of a match for a message.
func describeRegexes(m *Match) string {
	if m.Path.Regex != "" {
		return fmt.Sprintf("the path regex %q", m.Path.Regex)
	}
	return "the header, cookie and query regexes of the route"
}

func (m *Match) validate(l *errorList, path string, budget *regexBudget) {
	p := m.Path
	set := 0
	for _, v := range []string{p.Exact, p.Prefix, p.Regex} {
		if v != "" {
			set++
		}
	}
	switch {
	case set != 1:
		l.add(path+".path", "exactly one of exact, prefix and regex is required")
	case p.Exact != "":
		l.addErr(path+".path.exact", ValidateRoutePath(p.Exact))
	case p.Prefix != "":
		l.addErr(path+".path.prefix", ValidateRoutePath(p.Prefix))
	default:
		if _, err := CompilePathRegex(p.Regex); err != nil {
			l.add(path+".path.regex", "%v", err)
		} else if err := budget.spend(p.Regex, pathRegex); err != nil {
			l.add(path+".path.regex", "%v", err)
		}
	}
	for i, h := range m.Headers {
		hpath := fmt.Sprintf("%s.headers[%d]", path, i)
		l.addErr(hpath+".name", ValidateHeaderName(h.Name))
		validateValueMatch(l, hpath, h.Exact, h.Regex, budget)
	}
	for i, c := range m.Cookies {
		cpath := fmt.Sprintf("%s.cookies[%d]", path, i)
		l.addErr(cpath+".name", ValidateCookieName(c.Name))
		validateValueMatch(l, cpath, c.Exact, c.Regex, budget)
	}
	if m.Method != "" {
		l.addErr(path+".method", ValidateMethod(m.Method))
	}
	for i, q := range m.Query {
		qpath := fmt.Sprintf("%s.query[%d]", path, i)
		l.addErr(qpath+".name", ValidateQueryName(q.Name))
		validateValueMatch(l, qpath, q.Exact, q.Regex, budget)
	}
}

// ValidateMethod checks a request method of a match: a token of at most 32
// bytes, compared as written, so that "get" is refused (methods are
// case-sensitive and the standard ones upper-case).
func ValidateMethod(method string) error {
	if len(method) > 32 {
		return fmt.Errorf("must be at most 32 bytes")
	}
	if ValidateHeaderName(method) != nil {
		return fmt.Errorf("%q is not a valid method", method)
	}
	if strings.ToUpper(method) != method {
		return fmt.Errorf("%q must be upper-case: methods are matched case-sensitively", method)
	}
	return nil
}

// ValidateQueryName checks the name of a query parameter match: not empty,
// at most 256 bytes, no control characters (it is compared decoded).
func ValidateQueryName(name string) error {
	if name == "" {
		return fmt.Errorf("is required")
	}
	if len(name) > 256 {
		return fmt.Errorf("must be at most 256 bytes")
	}
	return ValidateHeaderValue(name)
}

// Key identifies what a match selects: two routes with the same key select
// the same requests. Prefixes with and without a trailing slash are the
// same; the order of header, cookie and query matchers does not matter.
func (m *Match) Key() string {
	var parts []string
	for _, h := range m.Headers {
		parts = append(parts, fmt.Sprintf("h:%s:%q:%q", strings.ToLower(h.Name), h.Exact, h.Regex))
	}
	for _, c := range m.Cookies {
		parts = append(parts, fmt.Sprintf("c:%s:%q:%q", c.Name, c.Exact, c.Regex))
	}
	for _, q := range m.Query {
		parts = append(parts, fmt.Sprintf("q:%q:%q:%q", q.Name, q.Exact, q.Regex))
	}
	if m.Method != "" {
		parts = append(parts, "m:"+m.Method)
	}
	slices.Sort(parts)
	p := m.Path
	path := fmt.Sprintf("e:%q r:%q p:%q", p.Exact, p.Regex, strings.TrimRight(p.Prefix, "/"))
	if p.Prefix != "" {
		path += " prefix"
	}
	return path + " " + strings.Join(parts, " ")
}

func validateValueMatch(l *errorList, path, exact, re string, budget *regexBudget) {
	if exact != "" && re != "" {
		l.add(path, "exact and regex exclude each other")
	}
	l.addErr(path+".exact", ValidateHeaderValue(exact))
	if re != "" {
		if _, err := CompileValueRegex(re); err != nil {
			l.add(path+".regex", "%v", err)
		} else if err := budget.spend(re, valueRegex); err != nil {
			l.add(path+".regex", "%v", err)
		}
	}
}

func (t *Tenant) validateAction(l *errorList, path string, a *Action) {
	set := 0
	if a.Pool != "" {
		set++
	}
	if len(a.Pools) > 0 {
		set++
	}
	if a.Redirect != nil {
		set++
	}
	if a.Respond != nil {
		set++
	}
	if set != 1 {
		l.add(path, "exactly one of pool, pools, redirect and respond is required")
		return
	}
	if a.Sticky && len(a.Pools) == 0 {
		l.add(path+".sticky", "only applies to pools")
	}
	switch {
	case a.Pool != "":
		t.checkPoolRef(l, path+".pool", a.Pool)
	case len(a.Pools) > 0:
		var total uint64
		for i, wp := range a.Pools {
			t.validateChoice(l, fmt.Sprintf("%s.pools[%d]", path, i), &wp)
			if wp.Weight > 1_000_000 {
				l.add(fmt.Sprintf("%s.pools[%d].weight", path, i), "must be 0..1000000")
			}
			total += uint64(wp.Weight)
		}
		if total == 0 {
			l.add(path+".pools", "at least one weight must be above 0")
		}
	case a.Redirect != nil:
		a.Redirect.validate(l, path+".redirect")
	default:
		a.Respond.validate(l, path+".respond")
	}
}

// checkPolicyPools refuses mirrors and error pages naming pools the
// tenant does not have.
func (t *Tenant) checkPolicyPools(l *errorList, path string, p *Policies) {
	if p == nil {
		return
	}
	for i, m := range p.Mirrors {
		t.checkPoolRef(l, fmt.Sprintf("%s.mirrors[%d].pool", path, i), m.Pool)
	}
	if e := p.ErrorPages; e != nil {
		if e.Pool != "" {
			t.checkPoolRef(l, path+".error_pages.pool", e.Pool)
		}
		if e.FallbackPool != "" {
			t.checkPoolRef(l, path+".error_pages.fallback_pool", e.FallbackPool)
		}
	}
}

// validateChoice checks that a choice of a weighted action names a pool
// of the tenant or answers an error status, not both.
func (t *Tenant) validateChoice(l *errorList, path string, wp *WeightedPool) {
	switch {
	case wp.Status == 0:
		t.checkPoolRef(l, path+".pool", wp.Pool)
	case wp.Pool != "":
		l.add(path, "pool and status exclude each other")
	case wp.Status < 400 || wp.Status > 599:
		l.add(path+".status", "must be 400..599")
	}
}

func (t *Tenant) checkPoolRef(l *errorList, path, name string) {
	if _, ok := t.Pools[name]; !ok {
		l.add(path, "no pool %q in this tenant", name)
	}
}

func (r *Redirect) validate(l *errorList, path string) {
	if r.URL == "" && r.Scheme == "" && r.Hostname == "" && r.Port == 0 && r.Path == "" && r.PathPrefix == nil {
		l.add(path, "url, or one of scheme, hostname, port, path and path_prefix, is required: a redirect that changes nothing sends the client back to itself")
	}
	if r.URL != "" {
		l.addErr(path+".url", ValidateHeaderValue(r.URL))
		if r.Scheme != "" || r.Hostname != "" || r.Port != 0 || r.Path != "" || r.PathPrefix != nil || r.TrimTrailingSlash {
			l.add(path+".url", "excludes scheme, hostname, port, path, path_prefix and trim_trailing_slash")
		}
	}
	switch r.Scheme {
	case "", "http", "https":
	default:
		l.add(path+".scheme", "must be http or https, not %q", r.Scheme)
	}
	if r.Hostname != "" {
		if strings.HasPrefix(r.Hostname, "*") || ValidateDomain(r.Hostname) != nil || strings.ToLower(r.Hostname) != r.Hostname {
			l.add(path+".hostname", "%q is not a lower-case domain name without a wildcard", r.Hostname)
		}
	}
	if r.Port < 0 || r.Port > 65535 {
		l.add(path+".port", "must be 1..65535")
	}
	validatePathModifier(l, path, r.Path, r.PathPrefix)
	switch r.Code {
	case 0, 301, 302, 303, 307, 308:
	default:
		l.add(path+".code", "must be 301, 302, 303, 307 or 308")
	}
}

// validatePathModifier checks a full path and a prefix replacement of a
// redirect or rewrite at path: they exclude each other; the first starts
// with "/", the second too unless it is empty; neither holds a query, a
// fragment or control characters.
func validatePathModifier(l *errorList, path, full string, prefix *string) {
	if full != "" && prefix != nil {
		l.add(path, "path and path_prefix exclude each other")
	}
	if full != "" {
		l.addErr(path+".path", validateTargetPath(full))
	}
	if prefix != nil && *prefix != "" {
		l.addErr(path+".path_prefix", validateTargetPath(*prefix))
	}
}

// validateTargetPath checks a path a redirect or rewrite sends.
func validateTargetPath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("must start with /")
	case strings.ContainsAny(p, "?#"):
		return fmt.Errorf("must not hold a query or a fragment")
	}
	return ValidateHeaderValue(p)
}

// validatePrefixReplacement refuses a path_prefix of the route's redirect
// or rewrite unless the route's path match is a prefix: the prefix it
// replaces is the one the route matched. path is the route's.
func validatePrefixReplacement(l *errorList, path string, m PathMatch, a *Action, p *Policies) {
	if m.Prefix != "" {
		return
	}
	const msg = "replaces the prefix the route matched; this route's path match is not a prefix"
	if a.Redirect != nil && a.Redirect.PathPrefix != nil {
		l.add(path+".action.redirect.path_prefix", msg)
	}
	if p != nil && p.Rewrite != nil && p.Rewrite.PathPrefix != nil {
		l.add(path+".policies.rewrite.path_prefix", msg)
	}
}

func (r *Respond) validate(l *errorList, path string) {
	if r.Status < 200 || r.Status > 599 {
		l.add(path+".status", "must be 200..599")
	}
	l.addErr(path+".content_type", ValidateHeaderValue(r.ContentType))
	if len(r.Body) > MaxRespondBody {
		l.add(path+".body", "must be at most %d bytes", MaxRespondBody)
	}
}

// validate checks a pool; loopback is server.admin.allow_loopback_members.
// validateVerification checks how a peer reached over TLS is verified (a
// pool's members, an authentication service): the name verified in its
// certificate, and the authorities or none.
func validateVerification(l *errorList, path, serverName, caFile string, skipVerify bool) {
	if serverName != "" && net.ParseIP(serverName) == nil {
		if strings.HasPrefix(serverName, "*") {
			l.add(path+".server_name", "%q: must be one name, not a wildcard: it is the name verified in the peer's certificate", serverName)
		} else {
			l.addErr(path+".server_name", ValidateDomain(serverName))
		}
	}
	if skipVerify && caFile != "" {
		l.add(path+".ca_file", "is not used with insecure_skip_verify, which accepts any certificate; leave one of them out")
	}
}

func (p *Pool) validate(l *errorList, path string, loopback bool) {
	switch p.Scheme {
	case "", SchemeHTTP, SchemeHTTPS, SchemeH2C, SchemeH2:
	default:
		l.add(path+".scheme", "must be http, https, h2c or h2")
	}
	if p.TLS != nil {
		if !p.Scheme.UsesTLS() {
			l.add(path+".tls", "only applies to the schemes https and h2")
		}
		validateVerification(l, path+".tls", p.TLS.ServerName, p.TLS.CAFile, p.TLS.InsecureSkipVerify)
		if (p.TLS.CertFile == "") != (p.TLS.KeyFile == "") {
			l.add(path+".tls", "cert_file and key_file go together: the client certificate and its key")
		}
	}
	switch p.MembersFrom {
	case "", MembersStatic, MembersAPI:
	default:
		l.add(path+".members_from", "must be static or api")
	}
	l.addMembers(path+".members", p.Members, p.MembersFrom == MembersAPI, loopback)
	p.validateBalance(l, path)
	if p.Retries != nil && (*p.Retries < 0 || *p.Retries > MaxRetries) {
		l.add(path+".retries", "must be 0..%d", MaxRetries)
	}
	if p.ConnectTimeout.Std() > 5*time.Minute {
		l.add(path+".connect_timeout", "must be at most 5m")
	}
	if p.ResponseTimeout.Std() > 24*time.Hour {
		l.add(path+".response_timeout", "must be at most 24h")
	}
}

// addMembers validates a member list: addresses host:port, no duplicates,
// weights 1..1000 (0 meaning 1). The members of an api pool (fromAPI) also
// pass the address rule, with loopback addresses allowed when loopback is
// true; static members, written by hand, may be anything.
func (l *errorList) addMembers(path string, members []Member, fromAPI, loopback bool) {
	seen := map[string]bool{}
	for i, m := range members {
		mpath := fmt.Sprintf("%s[%d]", path, i)
		if err := ValidateMemberAddress(m.Address); err != nil {
			l.add(mpath+".address", "%v", err)
		} else if err := checkMemberHost(m.Address, loopback); fromAPI && err != nil {
			l.add(mpath+".address", "%q: %v, which a member of a members_from: api pool may not be", m.Address, err)
		} else if seen[m.Address] {
			l.add(mpath+".address", "%s is listed twice", m.Address)
		}
		seen[m.Address] = true
		if m.Weight > MaxMemberWeight {
			l.add(mpath+".weight", "must be 1..%d", MaxMemberWeight)
		}
	}
}

// ValidateMembers checks a member list as PUT /v1/upstreams/{pool} receives
// it, with the rules of an api pool's members in the file: loopback
// addresses are allowed only when loopback is true
// (server.admin.allow_loopback_members).
func ValidateMembers(members []Member, loopback bool) error {
	var l errorList
	l.addMembers("members", members, true, loopback)
	return l.result()
}

func (p *Pool) validateBalance(l *errorList, path string) {
	switch p.Balance {
	case "", BalanceRoundRobin, BalanceLeastConn:
		if p.Hash != nil {
			l.add(path+".hash", "only applies to balance: hash")
		}
		return
	case BalanceHash:
	default:
		l.add(path+".balance", "must be round_robin, least_conn or hash")
		return
	}
	h := p.Hash
	if h == nil {
		l.add(path+".hash", "is required with balance: hash")
		return
	}
	switch h.By {
	case HashByClientIP, HashByCookie, HashByRequestURI:
	case HashByHeader:
		l.addErr(path+".hash.header", ValidateHeaderName(h.Header))
	case HashByCookieValue:
		if h.CookieName == "" {
			l.add(path+".hash.cookie_name", "is required with by: cookie_value")
		} else {
			l.addErr(path+".hash.cookie_name", ValidateCookieName(h.CookieName))
		}
	default:
		l.add(path+".hash.by", "must be client_ip, header, cookie, cookie_value or request_uri")
	}
	if h.By != HashByHeader && h.Header != "" {
		l.add(path+".hash.header", "only applies to by: header")
	}
	if h.By != HashByCookieValue && h.CookieName != "" {
		l.add(path+".hash.cookie_name", "only applies to by: cookie_value (by: cookie names its cookie in cookie.name)")
	}
	switch {
	case h.SubsetSize < 0 || h.SubsetSize > MaxSubsetSize:
		l.add(path+".hash.subset_size", "must be 0..%d", MaxSubsetSize)
	case h.SubsetSize > 0 && h.By == HashByCookie:
		l.add(path+".hash.subset_size", "does not apply to by: cookie (a session cookie keeps a client on one member)")
	}
	if h.Cookie != nil {
		if h.By != HashByCookie {
			l.add(path+".hash.cookie", "only applies to by: cookie")
		}
		h.Cookie.validate(l, path+".hash.cookie")
	}
}

func (c *AffinityCookie) validate(l *errorList, path string) {
	if c.Name != "" {
		l.addErr(path+".name", ValidateCookieName(c.Name))
	}
	if c.Path != "" && (!strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, ";\r\n\x00 ")) {
		l.add(path+".path", "must start with / and hold no ';', spaces or control characters")
	}
	if d := strings.TrimPrefix(c.Domain, "."); c.Domain != "" && (strings.HasPrefix(d, "*") || ValidateDomain(d) != nil) {
		l.add(path+".domain", "%q is not a domain (a cookie domain has no wildcard; .example.com covers the subdomains)", c.Domain)
	}
	switch c.SameSite {
	case "", "Lax", "Strict", "None":
	default:
		l.add(path+".same_site", "must be Lax, Strict or None")
	}
	switch c.Mode {
	case "", AffinityBalanced, AffinityPersistent:
	default:
		l.add(path+".mode", "must be balanced or persistent")
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidateName checks the name of a tenant, application, pool or listener:
// letters, digits, '_', '.', '-', starting with a letter or digit, at most
// 63 characters.
func ValidateName(name string) error {
	if len(name) > MaxNameLength || !nameRE.MatchString(name) {
		return fmt.Errorf("name %q must be 1..%d letters, digits, '_', '.' or '-', starting with a letter or digit", name, MaxNameLength)
	}
	return nil
}

// ValidateDomain checks an exact domain, a wildcard of one left-most label
// ("*.example.com": a.example.com, not a.b.example.com) or a wildcard of
// one or more left-most labels ("**.example.com": a.example.com and
// a.b.example.com): lower-case DNS labels, no port, no trailing dot. A
// wildcard never matches the name after it (example.com).
func ValidateDomain(d string) error {
	name := d
	if rest, ok := cutWildcard(d); ok {
		name = rest
	}
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%q is not a domain name", d)
	}
	for label := range strings.SplitSeq(name, ".") {
		if err := validateLabel(label); err != nil {
			return fmt.Errorf("%q is not a domain name: %v", d, err)
		}
	}
	return nil
}

// cutWildcard returns the name after a domain's wildcard, "**." or "*.";
// ok is false for a domain without one.
func cutWildcard(d string) (name string, ok bool) {
	if name, ok := strings.CutPrefix(d, "**."); ok {
		return name, true
	}
	return strings.CutPrefix(d, "*.")
}

func validateLabel(label string) error {
	if label == "" || len(label) > 63 {
		return fmt.Errorf("labels are 1..63 characters")
	}
	for i := 0; i < len(label); i++ {
		c := label[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(label)-1:
		case c >= 'A' && c <= 'Z':
			return fmt.Errorf("must be lower case")
		case c == '*':
			return fmt.Errorf("'*' may only be the whole left-most label")
		case c == ':':
			return fmt.Errorf("must not hold a port")
		default:
			return fmt.Errorf("character %q is not allowed", c)
		}
	}
	return nil
}

// ValidateRoutePath checks an exact or prefix path: it starts with "/", is
// in normalised form (no "//", "." or ".." segments, since requests are
// matched after normalisation) and holds no '?', '#' or control characters.
func ValidateRoutePath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("must start with /")
	}
	if len(p) > MaxValueLength {
		return fmt.Errorf("must be at most %d bytes", MaxValueLength)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '?' || c == '#' {
			return fmt.Errorf("must not hold '?', '#' or control characters")
		}
	}
	if strings.Contains(p, "//") {
		return fmt.Errorf("must not hold //; requests are matched with repeated slashes merged")
	}
	for i := strings.IndexByte(p, '%'); i >= 0 && i+2 < len(p); i = nextPercent(p, i) {
		if isHex(p[i+1]) && isHex(p[i+2]) {
			return fmt.Errorf("must not hold percent-encoding (%s); requests are matched after decoding, so write the character itself", p[i:i+3])
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("must not hold . or .. segments; requests are matched with them resolved")
		}
	}
	return nil
}

// ValidateHeaderName checks an HTTP header (field) name: a non-empty token.
func ValidateHeaderName(name string) error {
	if name == "" {
		return fmt.Errorf("is required")
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return fmt.Errorf("%q is not a valid header name", name)
		}
	}
	return nil
}

// ValidateCookieName checks a cookie name: a non-empty token.
func ValidateCookieName(name string) error {
	if err := ValidateHeaderName(name); err != nil {
		return fmt.Errorf("%q is not a valid cookie name", name)
	}
	return nil
}

// ValidateHeaderValue checks a value written into a header: no CR, LF, NUL
// or other control characters except tab, at most 4096 bytes.
func ValidateHeaderValue(v string) error {
	if len(v) > MaxValueLength {
		return fmt.Errorf("must be at most %d bytes", MaxValueLength)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return fmt.Errorf("must not hold control characters (CR, LF, NUL, ...)")
		}
	}
	return nil
}

// nextPercent returns the index of the next '%' of p after i, or -1.
func nextPercent(p string, i int) int {
	if j := strings.IndexByte(p[i+1:], '%'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// ValidateMemberAddress checks host:port with a port 1..65535. The host is
// an IP address (IPv6 in brackets) or a DNS name resolved at connect time.
func ValidateMemberAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port must be 1..65535", addr)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return fmt.Errorf("%q: zoned addresses are not supported", addr)
		}
		return nil
	}
	if err := ValidateDomain(strings.ToLower(host)); err != nil || strings.HasPrefix(host, "*") {
		return fmt.Errorf("%q: host is neither an IP address nor a DNS name", addr)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validate checks a client_auth; hasTLS says whether its application has
// a certificate of its own.
func (a *ClientAuth) validate(l *errorList, path string, hasTLS bool) {
	if !hasTLS {
		l.add(path, "requires the application's tls: a client certificate is asked for by the name the application's certificate serves")
	}
	if a.CAFile == "" {
		l.add(path+".ca_file", "is required")
	}
	switch a.Verify {
	case "", VerifyOn, VerifyOptional, VerifyOptionalNoCA:
	default:
		l.add(path+".verify", "must be on, optional or optional_no_ca")
	}
	if a.VerifyDepth < 0 || a.VerifyDepth > MaxVerifyDepth {
		l.add(path+".verify_depth", "must be 0..%d (0 means 1)", MaxVerifyDepth)
	}
	if a.ErrorPage != "" {
		l.addErr(path+".error_page", ValidateHeaderValue(a.ErrorPage))
	}
	if a.SubjectRegex != "" {
		_, err := CompileSubjectRegex(a.SubjectRegex)
		l.addErr(path+".subject_regex", err)
	}
}

func (t *HTTPSRedirectTarget) validate(l *errorList, path string) {
	if t != nil && (t.Port < 0 || t.Port > 65535) {
		l.add(path+".port", "must be 1..65535, or 0 for no port")
	}
}
