package config

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"time"
)

// authCacheKeyParts are the request attributes an external authentication
// cache key may hold, besides header:<Name> and cookie:<name>.
var authCacheKeyParts = map[string]bool{
	"method": true, "scheme": true, "host": true, "uri": true, "path": true, "client_ip": true,
}

// queryParamRE is a query parameter name the sign-in redirect may use.
var queryParamRE = regexp.MustCompile(`^[A-Za-z0-9_.~-]{1,64}$`)

// validate checks external authentication; srv is the server part, whose
// allow_loopback_members lets the URL be a loopback address and whose
// listeners a self subrequest goes to.
func (e *ExternalAuth) validate(l *errorList, path string, srv *Server) {
	u, err := e.validateURL(srv)
	l.addErr(path+".url", err)
	if e.Method != "" && ValidateHeaderName(e.Method) != nil {
		l.add(path+".method", "%q is not a method", e.Method)
	}
	if err := ValidateHeaderValue(e.RequestRedirect); err != nil {
		l.addErr(path+".request_redirect", err)
	} else if _, err := ParseAuthTemplate(e.RequestRedirect); err != nil {
		l.addErr(path+".request_redirect", err)
	}
	e.validateHeaders(l, path)
	if e.SigninURL != "" {
		if _, err := ParseAuthURL(e.SigninURL, true); err != nil {
			l.add(path+".signin_url", "%v", err)
		}
	}
	if p := e.SigninRedirectParam; p != "" && !queryParamRE.MatchString(p) {
		l.add(path+".signin_redirect_param", "%q is not a query parameter name (letters, digits, _.~-, at most 64)", p)
	}
	if t := e.Timeouts; t != nil {
		if t.Connect.Std() > MaxRouteConnectTimeout {
			l.add(path+".timeouts.connect", "must be at most %s", Duration(MaxRouteConnectTimeout))
		}
		if t.Response.Std() > MaxRouteResponseTimeout {
			l.add(path+".timeouts.response", "must be at most %s", Duration(MaxRouteResponseTimeout))
		}
	}
	if e.Cache != nil {
		e.Cache.validate(l, path+".cache")
	}
	if e.Keepalive != nil {
		e.Keepalive.validate(l, path+".keepalive")
	}
	switch {
	case e.TLS != nil && e.Self:
		l.add(path+".tls", "does not apply with self: ramjetd does not verify itself")
	case e.TLS != nil:
		e.TLS.validate(l, path+".tls", u)
	}
}

// validateURL checks the URL (see ParseAuthURL): a literal IP address
// host of a service passes the address rule of members, a variable host
// needs self, and self needs a listener of the URL's scheme. It returns
// the parts, nil when the URL is invalid.
func (e *ExternalAuth) validateURL(srv *Server) (*AuthURLParts, error) {
	u, err := ParseAuthURL(e.URL, false)
	if err != nil {
		return nil, err
	}
	switch {
	case e.Self:
		if SelfListener(srv.Listeners, u.Scheme == "https") == "" {
			return nil, fmt.Errorf("self: no listener %s TLS to send the subrequest of %q to", map[bool]string{true: "with", false: "without"}[u.Scheme == "https"], e.URL)
		}
	case u.HostVar != "":
		return nil, fmt.Errorf("%q: a variable host needs self (the subrequest goes to ramjetd itself)", e.URL)
	default:
		host := u.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
			if err := CheckMemberIPLoopback(ip, srv.Admin.AllowLoopbackMembers); err != nil {
				return nil, fmt.Errorf("%q: %w", e.URL, err)
			}
		}
	}
	return u, nil
}

// SelfListener is the name of the listener a self subrequest goes to: the
// first by name with TLS (tls) or without; "" when there is none.
func SelfListener(listeners map[string]*Listener, tls bool) string {
	for _, name := range sortedKeys(listeners) {
		if l := listeners[name]; l != nil && (l.TLS != nil) == tls {
			return name
		}
	}
	return ""
}

// validateHeaders checks proxy_set_headers and response_headers: neither
// may touch the framing, hop-by-hop headers or what ramjetd sets from what
// it knows of the client.
func (e *ExternalAuth) validateHeaders(l *errorList, path string) {
	if len(e.ProxySetHeaders) > MaxAuthProxySetHeaders {
		l.add(path+".proxy_set_headers", "at most %d headers, got %d", MaxAuthProxySetHeaders, len(e.ProxySetHeaders))
	}
	for _, name := range sortedKeys(e.ProxySetHeaders) {
		l.addErr(path+".proxy_set_headers."+name, CheckAuthSetHeader(name, e.ProxySetHeaders[name]))
	}
	for i, name := range e.ResponseHeaders {
		p := fmt.Sprintf("%s.response_headers[%d]", path, i)
		if err := CheckAuthHeaderName(name); err != nil {
			l.addErr(p, err)
		} else if strings.Contains(name, "_") {
			l.add(p, "%s cannot be copied: headers with '_' are not forwarded to members (as in ingress-nginx)", name)
		}
	}
}

// CheckAuthSetHeader checks a header of proxy_set_headers: its name as
// CheckAuthHeaderName does, its value free of control characters and of
// variables other than AuthVariables.
func CheckAuthSetHeader(name, value string) error {
	if err := CheckAuthHeaderName(name); err != nil {
		return err
	}
	if err := ValidateHeaderValue(value); err != nil {
		return err
	}
	if HasAuthVariables(value) {
		_, err := ParseAuthTemplate(value)
		return err
	}
	return nil
}

// CheckAuthHeaderName checks a header name external authentication sets
// or copies: a valid name that is not hop-by-hop, does not decide the
// framing and is not one ramjetd sets from what it knows of the client.
func CheckAuthHeaderName(name string) error {
	lower := strings.ToLower(name)
	switch err := ValidateHeaderName(name); {
	case err != nil:
		return err
	case unchangeableHeaders[lower]:
		return fmt.Errorf("%s cannot be set: it is hop-by-hop or decides the framing", name)
	case proxySetHeaders[lower]:
		return fmt.Errorf("%s cannot be set: ramjetd sets it from what it knows of the client", name)
	}
	return nil
}

func (c *AuthCache) validate(l *errorList, path string) {
	switch n := len(c.Key); {
	case n == 0:
		l.add(path+".key", "is required: name the request attributes an outcome holds for")
	case n > MaxAuthCacheKeyParts:
		l.add(path+".key", "at most %d parts, got %d", MaxAuthCacheKeyParts, n)
	}
	for i, part := range c.Key {
		l.addErr(fmt.Sprintf("%s.key[%d]", path, i), checkAuthCacheKeyPart(part))
	}
	for _, d := range []struct {
		field string
		value Duration
	}{{"allowed", c.Allowed}, {"unauthorized", c.Unauthorized}, {"forbidden", c.Forbidden}} {
		if d.value < 0 || d.value.Std() > MaxAuthCacheDuration {
			l.add(path+"."+d.field, "must be 0..%s", Duration(MaxAuthCacheDuration))
		}
	}
	if c.MaxEntries < 0 || c.MaxEntries > MaxAuthCacheEntries {
		l.add(path+".max_entries", "must be 0..%d", MaxAuthCacheEntries)
	}
}

func checkAuthCacheKeyPart(part string) error {
	if authCacheKeyParts[part] {
		return nil
	}
	if name, ok := strings.CutPrefix(part, "header:"); ok && ValidateHeaderName(name) == nil {
		return nil
	}
	if name, ok := strings.CutPrefix(part, "cookie:"); ok && name != "" && ValidateHeaderName(name) == nil {
		return nil
	}
	return fmt.Errorf("%q is not a key part: write method, scheme, host, uri, path, client_ip, header:<Name> or cookie:<name>", part)
}

func (k *AuthKeepalive) validate(l *errorList, path string) {
	if k.Connections < 0 || k.Connections > MaxAuthKeepaliveConns {
		l.add(path+".connections", "must be 0..%d", MaxAuthKeepaliveConns)
	}
	if k.Requests < 0 {
		l.add(path+".requests", "must be 0 (1000) or more")
	}
	if d := k.IdleTimeout.Std(); d < 0 || d > time.Hour {
		l.add(path+".idle_timeout", "must be 0..1h")
	}
}

// validate checks the TLS settings of the service at u, nil when the URL
// is invalid (and its error said so).
func (t *AuthTLS) validate(l *errorList, path string, u *AuthURLParts) {
	if u != nil && u.Scheme != "https" {
		l.add(path, "only applies to an https url")
	}
	validateVerification(l, path, t.ServerName, t.CAFile, t.InsecureSkipVerify)
}
