package core

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Model is the merged result of all contributions: every host with its
// routes, certificate and default, and the catch-all's default backend.
type Model struct {
	// Hosts by name; "" is the catch-all.
	Hosts map[string]*Host
	// DefaultBackend answers the catch-all's unmatched requests; nil
	// answers 404 (or the flag's default backend, see Options).
	DefaultBackend *Route
	// Findings of the merge (conflicts), not yet those of rendering.
	Findings []Finding
	// Unserved are served contributions that nevertheless serve nothing:
	// canaries that joined no main route.
	Unserved map[*Contribution]bool
	// scoped are the tables of scoped hosts, by listener and host.
	scoped []*scopedTable
	// listeners are the listeners contributions add, by name.
	listeners map[string]*Contribution
}

// Host is one host as served: the routes of the namespace that owns it.
type Host struct {
	Name string
	// Owner is the contribution whose claim decided the host's namespace.
	Owner *Contribution
	// Regex is true when the owning namespace asked for regex paths: every
	// prefix path of the host is then a regex.
	Regex bool
	// TLS is true for a host served over HTTPS (with the HTTPS redirect);
	// Cert is nil when the default certificate is served.
	TLS  bool
	Cert *Certificate
	// ClientAuth is the host's client certificate authentication and
	// ClientAuthOwner the object that set it; nil asks for none.
	ClientAuth      *ClientAuth
	ClientAuthOwner *Contribution
	// AppRoot redirects "/" (from the oldest owning contribution that
	// sets one).
	AppRoot string
	// Aliases are more names served like the host, with its certificate
	// (which covers them) or, when the host has none, the default one;
	// DefaultCertAliases are those its certificate does not cover, served
	// alike but with the default certificate. Both come from the oldest
	// served object of the owning namespace that sets server-alias
	// (AliasOwner), less the names other hosts, aliases or namespaces hold.
	Aliases, DefaultCertAliases []string
	AliasOwner                  *Contribution
	// WWWFrom is the www. twin of the host that redirects to it
	// (from-to-www-redirect of WWWOwner, the oldest served object of the
	// owning namespace that asks for it); "" for none.
	WWWFrom  string
	WWWOwner *Contribution
	// Passthrough is the route whose backend receives the host's TLS
	// connections undecrypted (ssl-passthrough of an object of the
	// owning namespace), and PassthroughOwner the oldest such object;
	// nil terminates TLS.
	Passthrough      *Route
	PassthroughOwner *Contribution
	// Routes in rendering order: exact and prefix routes, then regex
	// routes in the order they are tried.
	Routes []*Route
	// Fallback answers unmatched paths: the default backend of the object
	// that created the host (as ingress-nginx does); nil falls back to the
	// tenant's default.
	Fallback *Route
}

// Route is one path of one contribution as it will be served.
type Route struct {
	Origin *Contribution
	Match  config.Match
	// Backend is nil for a refused contribution's path, which answers 404.
	Backend *Backend
	// Canary is the canary route that shares this route's traffic.
	Canary *Route
	// written is the path as the object wrote it, which orders regexes,
	// and pathType its type: with the host, what a canary joins on.
	written  string
	pathType PathType
}

// Options are the switches of the merge and the rendering.
type Options struct {
	// CrossNamespacePaths lets objects of every namespace add paths to a
	// host, as ingress-nginx does (--cross-namespace-paths).
	CrossNamespacePaths bool
	// DefaultBackend is the replica-wide default backend
	// (--default-backend); nil answers 404.
	DefaultBackend *Backend
	// FileDir is where the data plane finds the generated files.
	FileDir string
}

// engine merges contributions.
type engine struct {
	opts     Options
	byAge    []*Contribution
	claims   map[string][]*Contribution // host → contributions with a rule for it, oldest first
	owners   map[string]*Contribution   // host → the claim that decides its namespace
	regex    map[string]bool            // hosts in regex mode
	model    *Model
	findings []Finding
}

// Merge applies the ownership rules of "Which Ingress wins" to the
// contributions.
func Merge(cs []*Contribution, opts Options) *Model {
	e := &engine{opts: opts, claims: map[string][]*Contribution{}, owners: map[string]*Contribution{},
		regex: map[string]bool{}, model: &Model{Hosts: map[string]*Host{}, Unserved: map[*Contribution]bool{}}}
	e.byAge = slices.Clone(cs)
	slices.SortStableFunc(e.byAge, func(a, b *Contribution) int {
		if Older(a.Origin, b.Origin) {
			return -1
		}
		if Older(b.Origin, a.Origin) {
			return 1
		}
		return 0
	})
	e.collectClaims()
	e.decideOwners()
	e.decideRegex()
	e.mergePaths()
	e.mergeTLS()
	// Client certificates may leave paths unserved, which canaries then
	// do not join.
	e.mergeClientAuth()
	e.attachCanaries()
	e.mergePassthrough()
	e.mergeDefaultBackend()
	e.orderRoutes()
	e.model.scoped = mergeScoped(e.byAge)
	e.model.listeners = addedListeners(e.byAge)
	e.mergeHostNames()
	e.model.Findings = e.findings
	return e.model
}

func (e *engine) note(c *Contribution, reason Reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > MaxMessage {
		msg = msg[:MaxMessage]
	}
	e.findings = append(e.findings, Finding{Object: c.Origin, Reason: reason, Message: msg})
}

// collectClaims records, per host, the contributions with a rule for it;
// a default backend is a claim on the catch-all.
func (e *engine) collectClaims() {
	for _, c := range e.byAge {
		if isCanary(c) {
			continue
		}
		seen := map[string]bool{}
		claim := func(host string) {
			if !seen[host] {
				seen[host] = true
				e.claims[host] = append(e.claims[host], c)
			}
		}
		for _, r := range c.Rules {
			claim(r.Host)
		}
		if c.DefaultBackend != nil {
			claim("")
		}
	}
}

// decideOwners finds the claim that decides each host's namespace: the
// oldest claim of the host, or of the wildcard of one label above it when
// that is older (a wildcard's owner keeps the hosts under it).
func (e *engine) decideOwners() {
	for host, cs := range e.claims {
		owner := cs[0]
		// With cross-namespace paths hosts are compared as written: the
		// wildcard rule is lifted with the namespace rule.
		if w := wildcardOf(host); w != "" && !e.opts.CrossNamespacePaths {
			if wc := e.claims[w]; len(wc) > 0 && Older(wc[0].Origin, owner.Origin) {
				owner = wc[0]
			}
		}
		e.owners[host] = owner
	}
}

// wildcardOf returns the wildcard host covering an exact host
// ("*.example.com" for "shop.example.com"), or "".
func wildcardOf(host string) string {
	if host == "" || strings.HasPrefix(host, "*.") {
		return ""
	}
	if i := strings.IndexByte(host, '.'); i > 0 {
		return "*" + host[i:]
	}
	return ""
}

// decideRegex puts a host in regex mode when a served object of the
// namespace that owns it asks for regex paths on it: only the owner can
// change how the host's other paths match.
func (e *engine) decideRegex() {
	for _, c := range e.byAge {
		if c.Refused || !c.Settings.Regex || isCanary(c) {
			continue
		}
		for _, r := range c.Rules {
			if c.Origin.Namespace == e.owners[r.Host].Origin.Namespace {
				e.regex[r.Host] = true
			}
		}
	}
}

// allowed reports whether c may add paths to host.
func (e *engine) allowed(c *Contribution, host string) bool {
	return e.opts.CrossNamespacePaths || c.Origin.Namespace == e.owners[host].Origin.Namespace
}

// host returns the model's host, creating it.
func (e *engine) host(name string) *Host {
	h := e.model.Hosts[name]
	if h == nil {
		h = &Host{Name: name, Owner: e.owners[name], Regex: e.regex[name]}
		e.model.Hosts[name] = h
	}
	return h
}

// mergePaths adds the paths of the contributions allowed on each host;
// the oldest wins a path, refused contributions included.
func (e *engine) mergePaths() {
	taken := map[string]map[string]*Contribution{} // host → path key → holder
	for _, c := range e.byAge {
		if isCanary(c) {
			continue
		}
		for _, r := range c.Rules {
			if !e.allowed(c, r.Host) {
				e.noteForeignHost(c, r.Host)
				continue
			}
			h := e.host(r.Host)
			if taken[r.Host] == nil {
				taken[r.Host] = map[string]*Contribution{}
			}
			for _, p := range r.Paths {
				e.addPath(h, c, p, taken[r.Host])
			}
			e.markAppRoot(h, c)
		}
	}
	e.setFallbacks()
}

func (e *engine) noteForeignHost(c *Contribution, host string) {
	owner := e.owners[host]
	what := hostPhrase(host)
	if w := wildcardOf(host); w != "" && len(e.claims[w]) > 0 && owner == e.claims[w][0] && !slices.Contains(e.claims[host], owner) {
		e.note(c, PathConflict, "%s falls under %s, which belongs to namespace %s (its oldest object is %s); the rules of this object for it are not served",
			what, Quote(w), owner.Origin.Namespace, owner.Origin)
		return
	}
	e.note(c, PathConflict, "%s belongs to namespace %s (its oldest object is %s); the rules of this object for it are not served",
		what, owner.Origin.Namespace, owner.Origin)
}

// hostPhrase names a host in a finding; rules without a host form the
// catch-all host.
func hostPhrase(h string) string {
	if h == "" {
		return "the catch-all host (rules without a host)"
	}
	return "host " + Quote(h)
}

// addPath adds one path to a host unless an older contribution holds its
// match.
func (e *engine) addPath(h *Host, c *Contribution, p Path, taken map[string]*Contribution) {
	m := e.match(h, c, p)
	key := matchKey(m)
	if holder := taken[key]; holder != nil {
		if holder == c {
			return // the same path twice in one object: one route
		}
		state := "served"
		if holder.Refused {
			state = "not served, so the path answers 404"
		}
		e.note(c, PathConflict, "path %s (%s) of %s is already held by %s, which is older (%s); this path is not served",
			Quote(p.Path), p.Type, hostPhrase(h.Name), holder.Origin, state)
		return
	}
	taken[key] = c
	route := &Route{Origin: c, Match: m, written: p.Path, pathType: p.Type}
	if !c.Refused {
		route.Backend = p.Backend
	}
	h.Routes = append(h.Routes, route)
}

// match turns a path into a route match: a contribution that asked for
// regexes gets its paths as regexes, Exact ones included; on a host in
// regex mode the others' paths are regexes matched literally, Exact ones
// included (ingress-nginx writes every location of such a host as
// ~* "^<path>"); elsewhere exact paths stay exact.
func (e *engine) match(h *Host, c *Contribution, p Path) config.Match {
	m := config.Match{Headers: p.Headers, Cookies: p.Cookies}
	switch {
	case c.Settings.Regex:
		m.Path.Regex = p.Path
	case h.Regex:
		// Regex mode of the host: this object did not ask for regexes,
		// so its path is matched literally.
		m.Path.Regex = regexp.QuoteMeta(p.Path)
	case p.Type == PathExact:
		m.Path.Exact = p.Path
	default:
		m.Path.Prefix = p.Path
	}
	return m
}

func hasRule(c *Contribution, host string) bool {
	for _, r := range c.Rules {
		if r.Host == host {
			return true
		}
	}
	return false
}

// markAppRoot gives the host the app root of its oldest owning, served
// object that sets one (app-root is host-wide in ingress-nginx).
func (e *engine) markAppRoot(h *Host, c *Contribution) {
	if c.Refused || c.Origin.Namespace != e.owners[h.Name].Origin.Namespace {
		return
	}
	if h.AppRoot == "" && c.Settings.AppRoot != "" {
		h.AppRoot = c.Settings.AppRoot
	}
}

// mergePassthrough gives each host whose owning namespace has a served
// object asking for ssl-passthrough (with a rule for the host) its
// passthrough backend: that of the host's path "/", whichever object holds
// it, else the default backend of the object that created the host, as
// ingress-nginx takes the backend of its server's location "/". A host
// without one stays terminated, as ingress-nginx ignores passthrough for
// it; so do the catch-all host (rules without a host: no server name
// selects it) and objects of other namespaces.
func (e *engine) mergePassthrough() {
	for _, c := range e.byAge {
		if !c.Settings.SSLPassthrough || c.Refused || isCanary(c) {
			continue
		}
		for _, r := range c.Rules {
			h := e.model.Hosts[r.Host]
			switch {
			case r.Host == "":
				e.note(c, InvalidAnnotation, "ssl-passthrough is ignored for the catch-all host (rules without a host): a TLS connection is spliced by the server name it asks for, and no name selects the catch-all; its TLS connections are terminated")
				continue
			case h == nil || h.PassthroughOwner != nil:
				continue
			case c.Origin.Namespace != e.owners[r.Host].Origin.Namespace:
				e.note(c, PathConflict, "ssl-passthrough is ignored for %s: it belongs to namespace %s, which decides whether its TLS connections are spliced", hostPhrase(r.Host), e.owners[r.Host].Origin.Namespace)
				continue
			}
			if route := passthroughRoute(h); route != nil {
				h.Passthrough, h.PassthroughOwner = route, c
				continue
			}
			e.note(c, InvalidAnnotation, "ssl-passthrough is ignored for host %s: no served path / (nor a default backend of the object that created the host) names the Service its TLS connections would go to, as ingress-nginx requires; its TLS connections are terminated", Quote(r.Host))
		}
	}
}

// passthroughRoute is the route of the host's path "/" with a backend (the
// oldest), else the host's fallback.
func passthroughRoute(h *Host) *Route {
	for _, r := range h.Routes {
		if r.written == "/" && r.Backend != nil && len(r.Match.Headers) == 0 && len(r.Match.Cookies) == 0 {
			return r
		}
	}
	if h.Fallback != nil && h.Fallback.Backend != nil {
		return h.Fallback
	}
	return nil
}

// matchKey identifies what a match selects, as config validation does: a
// prefix with or without its trailing slash is the same.
func matchKey(m config.Match) string {
	p := m.Path
	key := fmt.Sprintf("e=%q r=%q", p.Exact, p.Regex)
	if p.Prefix != "" {
		key += fmt.Sprintf(" p=%q", strings.TrimRight(p.Prefix, "/"))
	}
	for _, h := range m.Headers {
		key += fmt.Sprintf(" h:%s=%q/%q", strings.ToLower(h.Name), h.Exact, h.Regex)
	}
	for _, ck := range m.Cookies {
		key += fmt.Sprintf(" c:%s=%q/%q", ck.Name, ck.Exact, ck.Regex)
	}
	return key
}

// setFallbacks gives each host the default backend of the object that
// created it (its oldest allowed claim), when that object is served and has
// no access control.
func (e *engine) setFallbacks() {
	for name, h := range e.model.Hosts {
		if name == "" {
			continue
		}
		for _, c := range e.claims[name] {
			if !e.allowed(c, name) {
				continue
			}
			switch {
			case c.DefaultBackend == nil || c.Refused:
			case c.Settings.Protected:
				e.note(c, InvalidAnnotation, "the default backend is not used for host %s: the object has access control (basic auth, source ranges, client certificates, external authentication) and a default backend has none; unmatched paths answer 404", Quote(name))
			default:
				h.Fallback = &Route{Origin: c, Backend: c.DefaultBackend}
			}
			break
		}
	}
}

// mergeTLS decides each host's certificate: only the owning namespace may
// make a host a TLS host, and the oldest of its objects with a TLS entry for
// the host (and a rule for it) wins.
func (e *engine) mergeTLS() {
	winner := map[string]*Contribution{}
	for _, c := range e.byAge {
		if isCanary(c) {
			continue // a canary's hosts are its main's
		}
		for _, t := range c.TLS {
			for _, host := range t.Hosts {
				e.tlsHost(c, t, host, winner)
			}
		}
	}
}

func (e *engine) tlsHost(c *Contribution, t TLS, host string, winner map[string]*Contribution) {
	switch {
	case !hasRule(c, host):
		e.note(c, TLSSecret, "host %s is listed under tls but has no rule in this object, so it is not served over TLS by it", Quote(host))
		return
	case c.Origin.Namespace != e.owners[host].Origin.Namespace:
		if !t.Unlisted {
			e.note(c, TLSSecret, "host %s belongs to namespace %s; only its objects may set the host's certificate", Quote(host), e.owners[host].Origin.Namespace)
		}
		return
	case winner[host] != nil:
		if w := winner[host]; w != c && !t.Unlisted {
			e.note(c, TLSSecret, "host %s is already served with the certificate of %s, which is older", Quote(host), w.Origin)
		}
		return
	}
	winner[host] = c
	h := e.host(host)
	h.TLS = true
	switch {
	case t.Unlisted && t.Cert == nil:
		e.note(c, TLSSecret, "host %s is not listed under tls and no Secret of the object covers it; as ingress-nginx does for an object with a tls section, "+
			"it is served over HTTPS with the default certificate and its HTTP requests are redirected (list it under tls with a Secret that covers it, or set ssl-redirect: \"false\")", Quote(host))
	case t.Cert == nil:
		e.note(c, TLSSecret, "Secret %s: %s; host %s is served with the default certificate", Quote(t.Secret), t.Problem, Quote(host))
	case certs.Covers(t.Cert.Parsed, host) != nil:
		e.note(c, TLSSecret, "Secret %s: the certificate does not cover host %s; the host is served with the default certificate", Quote(t.Secret), Quote(host))
	default:
		h.Cert = t.Cert
	}
}

// mergeDefaultBackend picks the catch-all's default backend: the oldest
// claim allowed on the catch-all. One of a refused object or of an object
// with access control is not served, and the catch-all answers 404.
func (e *engine) mergeDefaultBackend() {
	var winner *Contribution
	for _, c := range e.byAge {
		if c.DefaultBackend == nil {
			continue
		}
		if isCanary(c) {
			e.note(c, InvalidAnnotation, "the default backend of a canary is not used: a canary only joins main routes with the same host, path type and path")
			continue
		}
		if !e.allowed(c, "") {
			e.note(c, PathConflict, "the default backend of unknown hosts belongs to namespace %s (its oldest claim is %s); this object's is not used for them",
				e.owners[""].Origin.Namespace, e.owners[""].Origin)
			continue
		}
		if winner != nil {
			e.note(c, PathConflict, "the default backend of unknown hosts is already set by %s, which is older; this object's is not used for them", winner.Origin)
			continue
		}
		winner = c
		e.host("")
		switch {
		case c.Refused:
			e.model.DefaultBackend = &Route{Origin: c}
		case c.Settings.Protected:
			e.note(c, InvalidAnnotation, "the default backend of an object with access control (basic auth, source ranges, client certificates, external authentication) is not served: the catch-all has none; unmatched requests answer 404")
			e.model.DefaultBackend = &Route{Origin: c}
		default:
			e.model.DefaultBackend = &Route{Origin: c, Backend: c.DefaultBackend}
		}
	}
}

// orderRoutes puts each host's routes in rendering order: exact and prefix
// routes by path, then regex routes as ingress-nginx orders its regex
// locations: those of the owning namespace first, then the others, each
// group longest path (as written) first.
func (e *engine) orderRoutes() {
	for _, h := range e.model.Hosts {
		owner := ""
		if h.Owner != nil {
			owner = h.Owner.Origin.Namespace
		}
		slices.SortStableFunc(h.Routes, func(a, b *Route) int {
			ra, rb := a.Match.Path.Regex != "", b.Match.Path.Regex != ""
			if ra != rb {
				return boolOrder(!ra, !rb)
			}
			if !ra {
				return cmp.Compare(matchKey(a.Match), matchKey(b.Match))
			}
			oa, ob := a.Origin.Origin.Namespace == owner, b.Origin.Origin.Namespace == owner
			if oa != ob {
				return boolOrder(oa, ob)
			}
			la, lb := len(a.written), len(b.written)
			if la != lb {
				return cmp.Compare(lb, la)
			}
			return cmp.Compare(b.written, a.written)
		})
	}
}

// boolOrder orders true before false.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
