package core

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// isCanary reports whether a contribution is a canary: it claims nothing
// (no host, path, certificate or default backend) and only joins main
// routes.
func isCanary(c *Contribution) bool { return c.Settings.Canary != nil }

// attachCanaries gives each path of each served canary to the main route
// with the same host, path type and path among the served routes of the
// canary's namespace (seed 002 "Canary"): never across namespaces, and one
// canary per main route, the oldest. A canary that joins no main route is
// not served.
func (e *engine) attachCanaries() {
	for _, c := range e.byAge {
		if !isCanary(c) || c.Refused {
			continue
		}
		paths, joined := 0, false
		for _, r := range c.Rules {
			for _, p := range r.Paths {
				paths++
				if e.attachCanary(c, r.Host, p) {
					joined = true
				}
			}
		}
		if paths == 0 {
			e.note(c, CanaryWithoutMain, "the canary has no paths, so it has no main route to join; it is not served")
		}
		if !joined {
			e.model.Unserved[c] = true
			continue
		}
		if ignoresOwnSettings(c.Settings) {
			e.note(c, InvalidAnnotation, "the canary's annotations other than canary-*, load-balance, upstream-hash-by, affinity and session-cookie-* are not used: its requests get the main route's settings")
		}
	}
}

// attachCanary joins one canary path to its main route, reporting why it
// cannot.
func (e *engine) attachCanary(c *Contribution, host string, p Path) bool {
	where := "path " + Quote(p.Path) + " (" + string(p.Type) + ") of " + hostPhrase(host)
	main := e.mainRoute(c, host, p)
	switch {
	case main == nil:
		e.note(c, CanaryWithoutMain, "%s has no main route of namespace %s (a non-canary object with the same host, path type and path); this canary path is not served", where, c.Origin.Namespace)
		return false
	case main.Backend == nil:
		e.note(c, CanaryWithoutMain, "the main route of %s belongs to %s, which is not served; this canary path is not served either", where, main.Origin.Origin)
		return false
	case main.Canary != nil:
		e.note(c, PathConflict, "%s already has the canary %s, which is older; a main route takes one canary", where, main.Canary.Origin.Origin)
		return false
	case c.Settings.Protected && !sameAccess(c.Settings, main.Origin.Settings):
		e.note(c, InvalidAnnotation, "the canary sets access control (basic auth, source ranges, client certificates, external authentication, ModSecurity) that differs from that of its main %s for %s; a canary takes its main's access control, so this canary path is not served", main.Origin.Origin, where)
		return false
	}
	main.Canary = &Route{Origin: c, Backend: p.Backend, written: p.Path, pathType: p.Type}
	return true
}

// mainRoute finds the route a canary path joins.
func (e *engine) mainRoute(c *Contribution, host string, p Path) *Route {
	h := e.model.Hosts[host]
	if h == nil {
		return nil
	}
	for _, r := range h.Routes {
		if !isCanary(r.Origin) && r.Origin.Origin.Namespace == c.Origin.Namespace && samePathType(r.pathType, p.Type) && r.written == p.Path {
			return r
		}
	}
	return nil
}

// samePathType compares path types as a canary joins on them:
// ImplementationSpecific is Prefix (DECISIONS.md), as ingress-nginx turns it
// into Prefix before merging canaries.
func samePathType(a, b PathType) bool {
	prefixLike := func(t PathType) PathType {
		if t == PathImplementationSpecific {
			return PathPrefix
		}
		return t
	}
	return prefixLike(a) == prefixLike(b)
}

// sameAccess reports whether two objects ask for the same access control.
func sameAccess(a, b Settings) bool {
	if !slices.Equal(a.Policies.Allow, b.Policies.Allow) || !slices.Equal(a.Policies.Deny, b.Policies.Deny) || !a.ClientAuth.Equal(b.ClientAuth) ||
		!reflect.DeepEqual(a.Policies.ExternalAuth, b.Policies.ExternalAuth) || !reflect.DeepEqual(a.Policies.WAF, b.Policies.WAF) {
		return false
	}
	switch {
	case a.BasicAuth == nil || b.BasicAuth == nil:
		return a.BasicAuth == b.BasicAuth
	default:
		return a.BasicAuth.Realm == b.BasicAuth.Realm && bytes.Equal(a.BasicAuth.Htpasswd, b.BasicAuth.Htpasswd)
	}
}

// ignoresOwnSettings reports whether a canary sets something a canary does
// not use: everything but its pool balancing and access control comes from
// the main route, as in ingress-nginx.
func ignoresOwnSettings(s Settings) bool {
	p := s.Policies
	p.Allow, p.Deny, p.ExternalAuth, p.WAF = nil, nil, nil, nil
	return s.Regex || s.AppRoot != "" || len(s.Aliases) > 0 || s.WWWRedirect || s.Mirror != nil || s.SSLPassthrough || s.SSLRedirect != nil || s.ForceSSLRedirect || s.Redirect != nil ||
		!isZeroPolicies(&p) || s.Pool.Scheme != "" || s.Pool.ServerName != "" || s.Pool.CA != nil || s.Pool.ClientCert != nil
}

// canaryPool is the pool settings of a canary's backend: how to reach
// members (scheme, TLS) is the main route's, as the main's location talks
// to both in ingress-nginx; balancing is the canary's own, but for session
// affinity: with affinity-canary-behavior: sticky (the default) the
// canary takes the main's, as ingress-nginx copies the main's session
// affinity to the canary, so that one cookie keeps a client on the canary
// or on the main pool; with legacy the canary never takes it.
//
// A canary that sets no balancing of its own takes the main's other
// balancing (upstream-hash-by, load-balance).
func canaryPool(main, canary *Contribution) PoolSettings {
	s := main.Settings.Pool
	own := canary.Settings.Pool
	s.ServiceUpstream = own.ServiceUpstream
	legacy := canary.Settings.LegacyCanaryAffinity
	switch {
	case !legacy && cookieAffinity(s):
	case own.Balance != "" || own.Hash != nil:
		s.Balance, s.Hash = own.Balance, own.Hash
	case cookieAffinity(s):
		s.Balance, s.Hash = "", nil
	}
	return s
}

// cookieAffinity reports whether pool settings have session affinity.
func cookieAffinity(p PoolSettings) bool {
	return p.Balance == config.BalanceHash && p.Hash != nil && p.Hash.By == config.HashByCookie
}

// canaryRoutes renders the canary of a main route: the routes its header
// and cookie send to the canary (or, with "never", keep on the main pool),
// which copy the main route and so keep its policies, and, for a weight, the
// main route's action split between the two pools. The extra routes come
// before the main route: ramjetd tries routes of one path with matchers in
// order, then the one without. Precedence is ingress-nginx's: header, then
// cookie, then weight.
func (r *rendering) canaryRoutes(route *Route, main *config.Route) []*config.Route {
	c := route.Canary.Origin
	if main.Action.Pool == "" {
		r.findings = append(r.findings, Finding{Object: c.Origin, Reason: InvalidAnnotation,
			Message: fmt.Sprintf("the main route of path %s (%s), of %s, answers by itself (a redirect, or not served): the canary takes none of its requests", Quote(route.written), route.pathType, route.Origin.Origin)})
		return nil
	}
	spec := c.Settings.Canary
	canarySettings := canaryPool(route.Origin, c)
	canary := r.poolAction(c, route.Canary.Backend, canarySettings)
	if canary.Pool == "" {
		return nil // the pool's name is taken; poolAction reported it
	}
	mainPool := main.Action.Pool
	// With session affinity on either pool, each action of the main route
	// and its canary routes holds both pools, sticky: a client whose cookie
	// one of them set goes back to it before the canary's header, cookie
	// or weight is looked at (ingress-nginx's order).
	sticky := cookieAffinity(route.Origin.Settings.Pool) || cookieAffinity(canarySettings)
	action := func(pool string) config.Action {
		if !sticky {
			return config.Action{Pool: pool}
		}
		other := canary.Pool
		if pool == canary.Pool {
			other = mainPool
		}
		return config.Action{Pools: []config.WeightedPool{{Pool: pool, Weight: 1}, {Pool: other}}, Sticky: true}
	}
	to := func(pool string, header *config.HeaderMatch, cookie *config.CookieMatch) *config.Route {
		out := *main
		out.Match.Headers, out.Match.Cookies = slices.Clone(main.Match.Headers), slices.Clone(main.Match.Cookies)
		if header != nil {
			out.Match.Headers = append(out.Match.Headers, *header)
		}
		if cookie != nil {
			out.Match.Cookies = append(out.Match.Cookies, *cookie)
		}
		out.Action = action(pool)
		return &out
	}
	var extra []*config.Route
	switch {
	case spec.Header == "":
	case spec.HeaderValue != "":
		extra = append(extra, to(canary.Pool, &config.HeaderMatch{Name: spec.Header, Exact: spec.HeaderValue}, nil))
	case spec.HeaderPattern != "":
		extra = append(extra, to(canary.Pool, &config.HeaderMatch{Name: spec.Header, Regex: AnywhereRegex(spec.HeaderPattern)}, nil))
	default:
		extra = append(extra, to(canary.Pool, &config.HeaderMatch{Name: spec.Header, Exact: "always"}, nil))
		if spec.Cookie != "" || spec.Weight > 0 {
			extra = append(extra, to(mainPool, &config.HeaderMatch{Name: spec.Header, Exact: "never"}, nil))
		}
	}
	if spec.Cookie != "" {
		extra = append(extra, to(canary.Pool, nil, &config.CookieMatch{Name: spec.Cookie, Exact: "always"}))
		if spec.Weight > 0 {
			extra = append(extra, to(mainPool, nil, &config.CookieMatch{Name: spec.Cookie, Exact: "never"}))
		}
	}
	switch {
	case spec.Weight > 0:
		w := min(spec.Weight, spec.Total)
		main.Action = config.Action{Pools: []config.WeightedPool{{Pool: mainPool, Weight: spec.Total - w}, {Pool: canary.Pool, Weight: w}}, Sticky: sticky}
	default:
		main.Action = action(mainPool)
	}
	return extra
}

// AnywhereRegex turns a pattern searched anywhere in a value (as
// ingress-nginx's canary-by-header-pattern) into a regex of ramjetd's
// header matchers, which must match the whole value.
func AnywhereRegex(pattern string) string { return ".*(?:" + pattern + ").*" }
