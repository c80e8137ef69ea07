package core

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/policies/httpsredirect"
)

// notServedBody answers the paths of objects that are not served.
const notServedBody = "Not Found\n"

// captureRefs finds $1..$9 in a rewrite target.
var captureRefs = regexp.MustCompile(`\$[1-9]`)

// rendering turns a Model into the tenant of ramjet.yaml, remembering which
// object every rendered field comes from (for isolation).
type rendering struct {
	opts Options
	// server is the base's server section with the listeners the
	// contributions add.
	server *config.Server
	// baseListeners limits the applications of Ingress-shaped
	// contributions to the base's listeners once others are added; nil
	// serves them on every listener.
	baseListeners []string
	tenant        *config.Tenant
	files         map[string][]byte
	names         nameOwners
	findings      []Finding
	// sources maps a field path prefix to the objects it comes from.
	sources map[string][]*Contribution
	// noErrorBackend are the objects told their custom-http-errors has no
	// error backend.
	noErrorBackend map[*Contribution]bool
}

func render(m *Model, base *config.Server, opts Options) *rendering {
	// Sized once: a large cluster renders thousands of hosts per rebuild,
	// and each host attributes a few fields.
	hosts := len(m.Hosts)
	r := &rendering{
		opts: opts,
		tenant: &config.Tenant{
			Applications: make(map[string]*config.Application, hosts),
			Pools:        make(map[string]*config.Pool, hosts),
		},
		files:   map[string][]byte{},
		names:   make(nameOwners, 2*hosts),
		sources: make(map[string][]*Contribution, 4*hosts),
	}
	r.server = r.withListeners(base, m.listeners)
	if len(m.listeners) > 0 {
		r.baseListeners = sortedKeys(base.Listeners)
	}
	if opts.DefaultBackend != nil {
		r.tenant.DefaultRoute = &config.DefaultRoute{Action: r.poolAction(nil, opts.DefaultBackend, PoolSettings{})}
		if m.Hosts[""] == nil {
			m.Hosts[""] = &Host{}
		}
	}
	for _, name := range sortedKeys(m.Hosts) {
		r.application(m, m.Hosts[name])
	}
	for _, t := range m.scoped {
		r.scopedApplication(t)
	}
	return r
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// application renders one host.
func (r *rendering) application(m *Model, h *Host) {
	name := AppName(h.Name)
	fieldPath := "tenants." + TenantName + ".applications." + name
	if owner, ok := r.names.claim(name, "host "+h.Name); !ok {
		r.conflict(h.Owner, "host %s gets the generated name %s, which %s already has; the host is not served", Quote(h.Name), name, owner)
		return
	}
	app := &config.Application{Domains: []string{h.Name}, HTTPSRedirect: h.TLS, AppRoot: h.AppRoot, Listeners: r.baseListeners}
	if h.Name == "" {
		app.Domains = []string{"*"}
	}
	r.attribute(fieldPath+".domains", h.Owner)
	if len(h.Aliases) > 0 {
		app.Domains = append(app.Domains, aliasDomains(h.Aliases)...)
		r.attribute(fieldPath+".domains", h.AliasOwner)
	}
	if h.AppRoot != "" {
		r.attribute(fieldPath+".app_root", h.Owner)
	}
	if h.Cert != nil && h.Name != "" {
		app.TLS = &config.CertificateFiles{
			CertFile: r.file(h.Cert.CertPEM, ".crt"),
			KeyFile:  r.file(h.Cert.KeyPEM, ".key"),
		}
	}
	if pt := h.Passthrough; pt != nil {
		// The pool of the path "/" as it is (its scheme and TLS are not
		// used for spliced connections).
		if action := r.poolAction(pt.Origin, pt.Backend, pt.Origin.Settings.Pool); action.Pool != "" {
			app.Passthrough = &config.Passthrough{Pool: action.Pool}
			r.attribute(fieldPath+".passthrough", h.PassthroughOwner)
			r.attribute(fieldPath+".passthrough", pt.Origin)
		}
	}
	if h.ClientAuth != nil {
		app.ClientAuth = r.clientAuth(h.ClientAuth)
		r.attribute(fieldPath+".client_auth", h.ClientAuthOwner)
	}
	for _, route := range h.Routes {
		main := r.route(h, route)
		if route.Canary != nil {
			for _, extra := range r.canaryRoutes(route, main) {
				r.attribute(fmt.Sprintf("%s.routes[%d]", fieldPath, len(app.Routes)), route.Canary.Origin)
				app.Routes = append(app.Routes, extra)
			}
		}
		r.attribute(fmt.Sprintf("%s.routes[%d]", fieldPath, len(app.Routes)), route.Origin)
		app.Routes = append(app.Routes, main)
	}
	app.DefaultRoute = r.defaultRoute(m, h, fieldPath)
	if redirects(app) {
		target := *ingressRedirectTarget
		app.HTTPSRedirectTarget = &target
	}
	r.tenant.Applications[name] = app
	r.defaultCertAliases(h, app, fieldPath)
	r.wwwRedirect(h)
}

func (r *rendering) defaultRoute(m *Model, h *Host, fieldPath string) *config.DefaultRoute {
	fallback := h.Fallback
	if h.Name == "" {
		fallback = m.DefaultBackend
	}
	if fallback == nil {
		return nil
	}
	r.attribute(fieldPath+".default_route", fallback.Origin)
	if fallback.Backend == nil {
		return &config.DefaultRoute{Action: notServed()}
	}
	return &config.DefaultRoute{Action: r.poolAction(fallback.Origin, fallback.Backend, fallback.Origin.Settings.Pool)}
}

// route renders one route: the action of its object's settings and their
// policies, within what the action allows.
func (r *rendering) route(h *Host, route *Route) *config.Route {
	c := route.Origin
	out := &config.Route{Match: route.Match}
	redirect := httpsRedirect(h, route)
	if redirect != h.TLS {
		out.HTTPSRedirect = &redirect
	}
	if t := redirectTarget(c); redirect && *t != *ingressRedirectTarget {
		out.HTTPSRedirectTarget = t
	}
	out.NoAccessLog = c.Settings.NoAccessLog
	switch {
	case route.Backend == nil:
		out.Action = notServed()
	case c.Settings.Redirect != nil:
		out.Action = config.Action{Redirect: c.Settings.Redirect}
	default:
		out.Action = r.poolAction(c, route.Backend, c.Settings.Pool)
		out.Policies = r.policies(c, route)
		if out.Action.Pool != "" {
			out.Policies = r.withMirror(c, out.Policies)
		}
	}
	return out
}

// withMirror adds the object's mirror (mirror-target) to a route's
// policies, with a pool of its own: m_<namespace>_<10 hex> of the target.
func (r *rendering) withMirror(c *Contribution, p *config.Policies) *config.Policies {
	m := c.Settings.Mirror
	if m == nil {
		return p
	}
	identity := fmt.Sprintf("mirror %s %s://%s %s %t", c.Origin.Namespace, m.Scheme, m.Address, m.ServerName, m.SkipVerify)
	sum := sha256.Sum256([]byte(identity))
	name := cut("m_" + c.Origin.Namespace + "_" + hex.EncodeToString(sum[:])[:10])
	if owner, ok := r.names.claim(name, identity); !ok {
		r.conflict(c, "the pool of mirror-target gets the generated name %s, which %s already has; requests are not mirrored", name, owner)
		return p
	}
	r.attribute("tenants."+TenantName+".pools."+name, c)
	if r.tenant.Pools[name] == nil {
		pool := &config.Pool{Scheme: m.Scheme, MembersFrom: config.MembersAPI, Members: []config.Member{{Address: m.Address}}}
		if m.Scheme.UsesTLS() {
			pool.TLS = &config.PoolTLS{ServerName: m.ServerName, InsecureSkipVerify: m.SkipVerify}
		}
		r.tenant.Pools[name] = pool
	}
	if p == nil {
		p = &config.Policies{}
	}
	copied := m.Copy
	copied.Pool = name
	p.Mirrors = append(slices.Clone(p.Mirrors), copied)
	return p
}

// httpsRedirect is a route's HTTPS redirect: forced, or the host's TLS
// unless the object turned it off. A route for ACME HTTP-01 challenges (its
// path as written lies under /.well-known/acme-challenge/, regexes
// included) is never redirected, not even when forced: ingress-nginx's
// no-tls-redirect-locations wins over force-ssl-redirect, so that a
// certificate can be issued for a host that has none yet.
func httpsRedirect(h *Host, route *Route) bool {
	c := route.Origin
	switch {
	case strings.HasPrefix(route.written+"/", httpsredirect.ACMEChallengePrefix):
		return false
	case c.Settings.ForceSSLRedirect:
		return true
	case c.Settings.SSLRedirect != nil:
		return h.TLS && *c.Settings.SSLRedirect
	}
	return h.TLS
}

// ingressRedirectTarget is the shape of ingress-nginx's HTTPS redirect
// without preserve-trailing-slash and use-port-in-redirects: one trailing
// slash removed, no port. The applications of Ingress hosts that redirect
// have it; a route whose object asks for another has its own.
var ingressRedirectTarget = &config.HTTPSRedirectTarget{TrimTrailingSlash: true}

// redirectTarget is the HTTPS redirect target an object asks for. The port
// is ingress-nginx's default HTTPS port (its --https-port).
func redirectTarget(c *Contribution) *config.HTTPSRedirectTarget {
	t := &config.HTTPSRedirectTarget{TrimTrailingSlash: !c.Settings.PreserveTrailingSlash}
	if c.Settings.PortInRedirects {
		t.Port = 443
	}
	return t
}

func notServed() config.Action {
	return config.Action{Respond: &config.Respond{Status: 404, Body: notServedBody}}
}

// policies renders an object's policies, with its htpasswd as a file. A
// rewrite applies to every path of the object, so its $1..$9 may name
// submatches a path does not have (an exact path has none): those are
// empty, as in nginx, whose rewrite of such a path has no such submatch.
//
// A path that is its own rewrite target is not rewritten (ingress-nginx's
// rewrite-target: / on path: / is a no-op, not "everything to /").
func (r *rendering) policies(c *Contribution, route *Route) *config.Policies {
	p := c.Settings.Policies
	if ep := c.Settings.ErrorPages; ep != nil {
		p.ErrorPages = r.errorPages(c, route, ep)
	}
	if a := c.Settings.BasicAuth; a != nil {
		p.BasicAuth = &config.BasicAuth{File: r.file(a.Htpasswd, ".htpasswd"), Realm: a.Realm}
	}
	if p.Rewrite != nil {
		rw := *p.Rewrite
		switch {
		case !NeedsRewrite(rw.Path, route.written):
			// X-Forwarded-Prefix goes only with a rewritten path, as
			// ingress-nginx writes it in its rewrite branch.
			rw.Path, rw.ForwardedPrefix = "", ""
		case rw.UsesCaptures():
			rw.Path = emptyMissingGroups(rw.Path, route.Match.Path.Regex)
			if rw.ForwardedPrefix != "" {
				rw.ForwardedPrefix = dropMissingGroups(rw.ForwardedPrefix, route.Match.Path.Regex)
			}
		}
		p.Rewrite = &rw
		if rw == (config.Rewrite{}) {
			p.Rewrite = nil
		}
	}
	if isZeroPolicies(&p) {
		return nil
	}
	return &p
}

// NeedsRewrite reports whether a path with a rewrite target is rewritten:
// a target equal to the path as written changes nothing, and does not make
// the path a regex, as in ingress-nginx.
func NeedsRewrite(target, path string) bool { return target != "" && target != path }

// emptyMissingGroups removes the $N of a rewrite target that the route's
// regex ("" for none) does not have; a target left empty is "/".
func emptyMissingGroups(target, regex string) string {
	if out := dropMissingGroups(target, regex); out != "" {
		return out
	}
	return "/"
}

// dropMissingGroups removes the $N of a template that the route's regex
// ("" for none) does not have.
func dropMissingGroups(target, regex string) string {
	groups := 0
	if regex != "" {
		re, err := config.CompilePathRegex(regex)
		if err != nil {
			return target // validation reports the regex
		}
		groups = re.NumSubexp()
	}
	return captureRefs.ReplaceAllStringFunc(target, func(ref string) string {
		if int(ref[1]-'0') <= groups {
			return ref
		}
		return ""
	})
}

// isZeroPolicies reports whether a route's policies do nothing: a satisfy
// mode alone combines no access policies.
func isZeroPolicies(p *config.Policies) bool {
	q := *p
	q.Satisfy = ""
	return q.IsZero()
}

// poolAction renders the pool of a backend with settings and returns the
// action that uses it. c is the object using it (nil for the flag's default
// backend).
func (r *rendering) poolAction(c *Contribution, b *Backend, s PoolSettings) config.Action {
	name := PoolName(b.Namespace, b.Service, b.Port, s)
	identity := fmt.Sprintf("%s/%s:%s %s", b.Namespace, b.Service, b.Port, s.digest())
	if owner, ok := r.names.claim(name, identity); !ok {
		r.conflict(c, "the pool of Service %s/%s port %s gets the generated name %s, which %s already has; the route answers 404",
			b.Namespace, b.Service, Quote(b.Port), name, owner)
		return notServed()
	}
	if c != nil {
		r.attribute("tenants."+TenantName+".pools."+name, c)
	}
	if r.tenant.Pools[name] == nil {
		r.tenant.Pools[name] = r.pool(b, s)
	}
	return config.Action{Pool: name}
}

func (r *rendering) pool(b *Backend, s PoolSettings) *config.Pool {
	p := &config.Pool{
		Scheme:      s.Scheme,
		MembersFrom: config.MembersAPI,
		Members:     slices.Clone(b.Members),
		Balance:     s.Balance,
		Hash:        s.Hash,
	}
	if p.Members == nil {
		p.Members = []config.Member{}
	}
	if s.Scheme.UsesTLS() && (s.ServerName != "" || s.CA != nil || s.ClientCert != nil || s.SkipVerify) {
		p.TLS = &config.PoolTLS{ServerName: s.ServerName, InsecureSkipVerify: s.SkipVerify}
		if s.CA != nil {
			p.TLS.CAFile = r.file(s.CA, ".ca.pem")
		}
		if c := s.ClientCert; c != nil {
			p.TLS.CertFile, p.TLS.KeyFile = r.file(c.CertPEM, ".crt"), r.file(c.KeyPEM, ".key")
		}
	}
	return p
}

// file records content as a file named by its digest and returns its path.
func (r *rendering) file(content []byte, ext string) string {
	name := FileName(content, ext)
	r.files[name] = content
	return path.Join(r.opts.FileDir, name)
}

// FileName is the name of a generated file: the sha256 of its content and
// an extension. Names never come from user input.
func FileName(content []byte, ext string) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:]) + ext
}

func (r *rendering) attribute(fieldPath string, c *Contribution) {
	if c != nil && !slices.Contains(r.sources[fieldPath], c) {
		r.sources[fieldPath] = append(r.sources[fieldPath], c)
	}
}

func (r *rendering) conflict(c *Contribution, format string, args ...any) {
	if c == nil {
		return
	}
	r.findings = append(r.findings, Finding{Object: c.Origin, Reason: PathConflict, Message: fmt.Sprintf(format, args...)})
}

// redirects reports whether an application or one of its routes has the
// HTTPS redirect.
func redirects(app *config.Application) bool {
	if app.HTTPSRedirect {
		return true
	}
	for _, r := range app.Routes {
		if r.HTTPSRedirect != nil && *r.HTTPSRedirect {
			return true
		}
	}
	return false
}
