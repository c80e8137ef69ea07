// Package mirror is the mirror family: ingress-nginx's mirror-target,
// mirror-host and mirror-request-body. A copy of every request of the
// object's paths goes to the target URL, whose answer is discarded (the
// route's policies.mirrors, with a pool of its own for the target's
// address). The target's host passes the address rule of members: an IP
// address it refuses (loopback, link-local, unspecified, ...) is refused
// here, and ramjetd applies the rule to what a DNS name resolves to, so no
// object can aim copies at the proxy's own host or a metadata service.
package mirror

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The family's keys.
const (
	keyTarget      = "mirror-target"
	keyHost        = "mirror-host"
	keyRequestBody = "mirror-request-body"
)

// requestURI is the one nginx variable a target may hold, at its end.
const requestURI = "$request_uri"

func init() {
	registry.Register(&registry.Family{
		Name: "mirror",
		Doc:  "Copies of the object's requests sent to another URL, whose answers are discarded.",
		Keys: []registry.Key{
			{Name: keyTarget, Validate: registry.Trimmed(validateTarget), Risk: registry.RiskHigh, Scope: registry.ScopeIngress,
				Doc: "An http or https URL that receives a copy of every request of the object's paths; the copy's answer is discarded and never delays or changes the client's. " +
					"Written scheme://host[:port]$request_uri, the copies carry the path and query the client sent (before any rewrite-target); " +
					"written scheme://host[:port]/path, they go to that path with the client's query. " +
					"The host is a DNS name (such as a Service's cluster name) or an IP address; an address the address rule of members refuses " +
					"(loopback, link-local, unspecified, ...) is AddressRefused and nothing is mirrored, and ramjetd applies the rule to what a name resolves to. " +
					"An https target is verified against the system's roots for its host name with --backend-tls-verify=always (the default), not verified with annotated. " +
					"Requests refused before they are forwarded (source ranges, authentication, ...) are not copied, as in ingress-nginx.",
				Differs: "Other nginx variables, a $request_uri after a path, a target without path (ingress-nginx then sends its internal /_mirror-<uid> path), " +
					"a query, a user or a fragment are invalid and nothing is mirrored. " +
					"A request whose body is over 64 KiB (or streamed, of unknown length) is not copied unless mirror-request-body is off; " +
					"at most 256 copies are in flight in ramjetd, each for at most 30s, and copies over that bound are not sent " +
					"(nginx holds the body for every copy, and a slow target can hold up the client's connection). " +
					"Copies carry the request headers the member gets (X-Forwarded-*, X-Real-IP, X-Request-ID and the other header changes included); " +
					"nginx's carry the client's headers alone. An https target gets its host as TLS server name (nginx sends none)."},
			{Name: keyHost, Validate: registry.Trimmed(validateHost), Risk: registry.RiskHigh, Scope: registry.ScopeIngress,
				Doc:     "The Host header of the copies (a DNS name or an IP address, with an optional port); without it, the target's host (without port).",
				Differs: "nginx variables and anything but host[:port] are invalid and the target's host is sent. Without mirror-target it configures nothing."},
			{Name: keyRequestBody, Validate: registry.Trimmed(validateOnOff), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "on",
				Doc:     "off sends the copies without the request's body; then requests with bodies of any size are copied.",
				Differs: "A value other than on and off is invalid and the body is sent (as ingress-nginx, which logs it)."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	raw, ok := values[keyTarget]
	if !ok {
		for _, key := range registry.Present(values) {
			ctx.Note(core.UnknownAnnotation, "%s only configures %s%s, which the object does not have (or is invalid); it is ignored", key, registry.Prefix, keyTarget)
		}
		return nil
	}
	t, err := parseTarget(strings.TrimSpace(raw))
	if err != nil {
		ctx.Invalid(keyTarget, "%v", err)
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(t.host, "[]")); err == nil {
		if err := config.CheckMemberIP(ip); err != nil {
			ctx.Note(core.AddressRefused, "%s%s: %v, which copies of requests may not be sent to (the address rule of members); the key is ignored and requests are not mirrored",
				registry.Prefix, keyTarget, err)
			return nil
		}
	}
	m := &core.MirrorTarget{Scheme: t.scheme, Address: net.JoinHostPort(strings.Trim(t.host, "[]"), t.port), ServerName: strings.Trim(t.host, "[]")}
	m.Copy = config.Mirror{Host: t.host, Path: t.path, RequestURI: t.requestURI}
	if h, ok := values[keyHost]; ok {
		m.Copy.Host = strings.TrimSpace(h)
	}
	if v, ok := values[keyRequestBody]; ok && strings.TrimSpace(v) == "off" {
		m.Copy.NoBody = true
	}
	return func(s *core.Settings) { s.Mirror = m }
}

// target is a parsed mirror-target.
type target struct {
	scheme     config.Scheme
	host, port string // host as written (IPv6 in brackets), port explicit
	path       string // fixed path, "" with requestURI
	requestURI bool
}

func validateTarget(v string) error {
	_, err := parseTarget(v)
	return err
}

// parseTarget reads scheme://host[:port]$request_uri or
// scheme://host[:port]/path.
func parseTarget(v string) (*target, error) {
	base, variable, hasVar := strings.Cut(v, "$")
	if hasVar && "$"+variable != requestURI && "$"+variable != "${request_uri}" {
		return nil, fmt.Errorf("%s: the only nginx variable a target may hold is $request_uri, at its end", core.Quote(v))
	}
	scheme, rest, ok := strings.Cut(base, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return nil, fmt.Errorf("%s is not an http:// or https:// URL", core.Quote(v))
	}
	if strings.ContainsAny(rest, "?#@ \t") {
		return nil, fmt.Errorf("%s: a target holds no query, fragment, user or space", core.Quote(v))
	}
	hostport, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		hostport, path = rest[:i], rest[i:]
	}
	t := &target{scheme: config.Scheme(scheme), requestURI: hasVar, path: path}
	var err error
	if t.host, t.port, err = splitHostPort(hostport, scheme); err != nil {
		return nil, fmt.Errorf("%s: %w", core.Quote(v), err)
	}
	switch {
	case hasVar && path != "":
		return nil, fmt.Errorf("%s: a path before $request_uri is not provided; write scheme://host[:port]$request_uri", core.Quote(v))
	case !hasVar && path == "":
		return nil, fmt.Errorf("%s has no path: write scheme://host[:port]$request_uri for the client's path and query, or a path (ingress-nginx would send its internal /_mirror-<uid> path)", core.Quote(v))
	}
	if path != "" {
		decoded, err := url.PathUnescape(path)
		if err != nil || config.ValidateHeaderValue(decoded) != nil {
			return nil, fmt.Errorf("%s: the path is not a valid URL path (bad %%-escape or control characters)", core.Quote(v))
		}
		t.path = decoded
	}
	return t, nil
}

// splitHostPort checks host[:port] (IPv6 in brackets) and returns the
// host as written and the port, the scheme's by default.
func splitHostPort(hp, scheme string) (host, port string, err error) {
	port = "80"
	if scheme == "https" {
		port = "443"
	}
	host = hp
	if h, p, err := net.SplitHostPort(hp); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "", fmt.Errorf("the port must be 1..65535")
		}
		host, port = h, p
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	} else if strings.Contains(hp, ":") && !(strings.HasPrefix(hp, "[") && strings.HasSuffix(hp, "]")) {
		return "", "", fmt.Errorf("the host is not host or host:port (an IPv6 address goes in brackets)")
	}
	if err := validateHost(host); err != nil {
		return "", "", err
	}
	return host, port, nil
}

// validateHost accepts a DNS name (no wildcard), an IPv4 address or a
// bracketed IPv6 address without zone, each with an optional port.
func validateHost(v string) error {
	if strings.Contains(v, "$") {
		return fmt.Errorf("%s holds a $: nginx variables are not interpolated; write the host name itself", core.Quote(v))
	}
	return config.CheckHostPort(v)
}

func validateOnOff(v string) error {
	if v != "on" && v != "off" {
		return fmt.Errorf("%s is not on or off", core.Quote(v))
	}
	return nil
}
