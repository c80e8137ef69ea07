package daemon

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/proxy"
	"github.com/ramjet-dev/ramjet/dataplane/router"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
	"github.com/ramjet-dev/ramjet/policies/approot"
	"github.com/ramjet-dev/ramjet/policies/basicauth"
	"github.com/ramjet-dev/ramjet/policies/bodylimit"
	"github.com/ramjet-dev/ramjet/policies/clientcert"
	"github.com/ramjet-dev/ramjet/policies/cors"
	"github.com/ramjet-dev/ramjet/policies/extauth"
	"github.com/ramjet-dev/ramjet/policies/globalratelimit"
	"github.com/ramjet-dev/ramjet/policies/headers"
	"github.com/ramjet-dev/ramjet/policies/httpsredirect"
	"github.com/ramjet-dev/ramjet/policies/ratelimit"
	"github.com/ramjet-dev/ramjet/policies/redirect"
	"github.com/ramjet-dev/ramjet/policies/respond"
	"github.com/ramjet-dev/ramjet/policies/rewrite"
	"github.com/ramjet-dev/ramjet/policies/sourcerange"
	"github.com/ramjet-dev/ramjet/policies/waf"
)

// generation is one compiled configuration. It never changes after it is
// built; requests read it through an atomic pointer.
type generation struct {
	number  uint64
	digest  string
	loaded  time.Time
	config  *config.Config
	tables  tableSet
	certs   map[string]*certs.Store // by TLS listener name
	trusted []netip.Prefix
	pools   map[string]*upstream.Pool
	// passthrough names the TLS listeners that peek ClientHellos, since
	// an application they serve has a passthrough.
	passthrough map[string]bool
	// bodyTimeout bounds each read of a request body.
	bodyTimeout time.Duration
	// variants are the transports of routes with their own timeouts.
	variants []*upstream.Transport
	// authFiles are the digests of the htpasswd files in use.
	authFiles [][32]byte
	// externalAuth are the external authentication policies, closed when
	// a reload replaces them.
	externalAuth []*extauth.Handler
	// wafs are the ModSecurity engines in use, by waf.Key: a reload keeps
	// those it still needs and closes the others.
	wafs map[[32]byte]*waf.Engine
	// limits are the rate-limit tables in use: a reload keeps the others'
	// counts by zone.
	limits *ratelimit.Use
	// memcached is the global rate limits' client (nil without
	// server.memcached): a reload with the same settings keeps it.
	memcached *globalratelimit.Client
}

// tableSet holds the routing table of each listener, by name.
type tableSet map[string]*router.Table[*route]

// emptyTable serves no domain: the table of a listener the generation does
// not have (one a reload removed, finishing its requests).
var emptyTable, _ = router.Build[*route](nil, 0)

// of is the table of the listener name.
func (s tableSet) of(name string) *router.Table[*route] {
	if t := s[name]; t != nil {
		return t
	}
	return emptyTable
}

// route is what a lookup finds: the compiled handler chain and the
// application it belongs to.
type route struct {
	handler exchange.Handler
	app     *application
	// noAccessLog leaves the route's requests out of the access log.
	noAccessLog bool
}

// application carries what every route of an application shares.
type application struct {
	tenant, name string
	requests     *[6]prometheus.Counter
	// clientAuth is the application's client_auth, nil without one.
	clientAuth *clientcert.Policy
	// sniGroup is the application's sni_group.
	sniGroup string
	// passthrough splices the application's TLS connections; nil
	// terminates them.
	passthrough *passthrough
}

// notFoundRoute answers requests that match a domain but no route, when
// neither the application nor its tenant has a default route.
var notFoundRoute = respond.New(http.StatusNotFound, "", "Not Found: no route of this host matches the request\n")

// compiler builds a generation. Its errors are config.FieldErrors, so that
// refusals read like validation errors.
type compiler struct {
	d         *Daemon
	cfg       *config.Config
	errs      []error
	pools     map[string]*upstream.Pool
	stores    map[string]*certs.Store
	variants  []*upstream.Transport
	authFiles [][32]byte
	extAuth   []*extauth.Handler
	wafs      map[[32]byte]*waf.Engine
	limits    *ratelimit.Use
	memcached *globalratelimit.Client
}

// compile validates cfg and builds the generation that serves it. Files
// (certificates, keys, CA bundles) are read here. Nothing of the running
// generation changes, whatever the outcome.
func (d *Daemon) compile(cfg *config.Config, raw []byte) (*generation, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &compiler{d: d, cfg: cfg, pools: map[string]*upstream.Pool{}, stores: map[string]*certs.Store{}, wafs: map[[32]byte]*waf.Engine{}, limits: d.limits.Begin(), memcached: d.memcachedClient(cfg.Server.Memcached)}
	c.checkFixed()
	c.buildPools()
	c.buildCertStores()
	sites := c.buildSites()
	if len(c.errs) > 0 {
		c.closeNewEngines()
		return nil, joinErrors(c.errs)
	}
	tables, err := router.BuildScoped(sites, sortedKeys(cfg.Server.Listeners), int(cfg.Server.Limits.MaxRegexInputBytes.Or(config.DefaultMaxRegexInputBytes)))
	if err != nil {
		c.closeNewEngines()
		return nil, &config.FieldError{Path: "tenants", Message: err.Error()}
	}
	sum := sha256.Sum256(raw)
	return &generation{
		digest:  hex.EncodeToString(sum[:]),
		loaded:  time.Now(),
		config:  cfg,
		tables:  tables,
		certs:   c.stores,
		trusted: trustedPrefixes(cfg.Server.TrustedProxies),
		pools:   c.pools,

		passthrough: passthroughListeners(cfg),
		bodyTimeout: cfg.Server.Limits.ReadBodyTimeout.Or(config.DefaultReadBodyTimeout),
		variants:    c.variants,
		authFiles:   c.authFiles,

		externalAuth: c.extAuth,
		wafs:         c.wafs,
		limits:       c.limits,
		memcached:    c.memcached,
	}, nil
}

func (c *compiler) fail(path, format string, args ...any) {
	c.errs = append(c.errs, &config.FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// checkFixed refuses changes to what binds sockets and servers, which only
// a restart applies.
func (c *compiler) checkFixed() {
	if c.d.started == nil {
		return
	}
	if msg := fixedDifference(c.d.started, &c.cfg.Server); msg != "" {
		c.fail("server", "%s cannot change while ramjetd runs; restart it to apply", msg)
	}
}

func (c *compiler) buildPools() {
	for _, tname := range sortedKeys(c.cfg.Tenants) {
		t := c.cfg.Tenants[tname]
		for _, pname := range sortedKeys(t.Pools) {
			p, err := c.d.state.Build(pname, t.Pools[pname])
			if err != nil {
				c.fail("tenants."+tname+".pools."+pname, "%v", err)
				continue
			}
			p.Latency = c.d.metrics.UpstreamLatency(pname)
			c.pools[pname] = p
		}
	}
}

// buildCertStores makes one certificate store per TLS listener: the
// applications' certificates plus the listener's default.
func (c *compiler) buildCertStores() {
	appCerts := c.loadApplicationCerts()
	for _, lname := range sortedKeys(c.cfg.Server.Listeners) {
		ln := c.cfg.Server.Listeners[lname]
		if ln.TLS == nil {
			continue
		}
		def, err := c.d.defaultCertificate(ln.TLS)
		if err != nil {
			c.fail("server.listeners."+lname+".tls", "%v", err)
			continue
		}
		store := certs.NewStore(def)
		for _, ac := range appCerts {
			if !servedOn(ac.listeners, lname) {
				continue
			}
			if err := store.Add(ac.domain, ac.cert); err != nil {
				c.fail(ac.path, "%v", err)
			}
		}
		c.stores[lname] = store
	}
}

type appCert struct {
	path, domain string
	cert         *tls.Certificate
	listeners    []string // the application's; empty for all
}

// servedOn reports whether an application with the listeners scope serves
// the listener name.
func servedOn(scope []string, name string) bool {
	return len(scope) == 0 || slices.Contains(scope, name)
}

func (c *compiler) loadApplicationCerts() []appCert {
	var out []appCert
	c.eachApplication(func(path, _, _ string, app *config.Application) {
		if app.TLS == nil {
			return
		}
		cert, err := certs.LoadFiles(app.TLS.CertFile, app.TLS.KeyFile)
		if err != nil {
			c.fail(path+".tls", "%v", err)
			return
		}
		for _, d := range app.Domains {
			if d == "*" {
				continue
			}
			if err := certs.Covers(cert, d); err != nil {
				c.fail(path+".tls", "%v", err)
				continue
			}
			out = append(out, appCert{path: path + ".tls", domain: d, cert: cert, listeners: app.Listeners})
		}
	})
	return out
}

func (c *compiler) eachApplication(fn func(path, tenant, name string, app *config.Application)) {
	for _, tname := range sortedKeys(c.cfg.Tenants) {
		t := c.cfg.Tenants[tname]
		for _, aname := range sortedKeys(t.Applications) {
			fn("tenants."+tname+".applications."+aname, tname, aname, t.Applications[aname])
		}
	}
}

func (c *compiler) buildSites() []router.Site[*route] {
	var sites []router.Site[*route]
	c.eachApplication(func(path, tname, aname string, app *config.Application) {
		tenant := c.cfg.Tenants[tname]
		info := &application{tenant: tname, name: aname, requests: c.d.metrics.RequestCounters(tname, aname), sniGroup: app.SNIGroup}
		if app.ClientAuth != nil {
			info.clientAuth = c.clientAuth(path+".client_auth", app.ClientAuth)
		}
		if app.Passthrough != nil {
			info.passthrough = c.compilePassthrough(tname, aname, app.Passthrough)
		}
		site := router.Site[*route]{Domains: app.Domains, Scopes: app.Listeners}
		for i, r := range app.Routes {
			redirect := app.HTTPSRedirect
			if r.HTTPSRedirect != nil {
				redirect = *r.HTTPSRedirect
			}
			host := hostPolicies{appRoot: app.AppRoot, httpsRedirect: redirect && !underACME(r.Match.Path), redirectTarget: app.HTTPSRedirectTarget}
			if r.HTTPSRedirectTarget != nil {
				host.redirectTarget = r.HTTPSRedirectTarget
			}
			rpath := fmt.Sprintf("%s.routes[%d]", path, i)
			site.Routes = append(site.Routes, router.Route[*route]{
				Match:    r.Match,
				Value:    &route{handler: withClientAuth(info, redirect || underACME(r.Match.Path), c.chain(rpath, r.Match.Path.Prefix, &r.Action, r.Policies, host)), app: info, noAccessLog: r.NoAccessLog},
				Captures: r.Policies != nil && r.Policies.Rewrite.UsesCaptures(),
			})
		}
		site.Default = &route{handler: withClientAuth(info, app.HTTPSRedirect, c.defaultHandler(path, app, tname, tenant)), app: info}
		sites = append(sites, site)
	})
	return sites
}

// withClientAuth puts the application's client certificate check in front
// of a route's handlers, as nginx checks the certificate before any phase
// of a request; plainHTTP lets plain-HTTP requests through to the route
// (see clientcert.Handler).
func withClientAuth(app *application, plainHTTP bool, h exchange.Handler) exchange.Handler {
	if app.clientAuth == nil {
		return h
	}
	return clientcert.Handler{Policy: app.clientAuth, PlainHTTP: plainHTTP, Next: h}
}

// clientAuth loads the files of an application's client_auth; path is the
// field's, for errors.
func (c *compiler) clientAuth(path string, cfg *config.ClientAuth) *clientcert.Policy {
	cas, err := certs.LoadCACertificatesFile(cfg.CAFile)
	if err != nil {
		c.fail(path+".ca_file", "%v", err)
		return nil
	}
	var crls []*x509.RevocationList
	if cfg.CRLFile != "" {
		if crls, err = certs.LoadCRLFile(cfg.CRLFile, cas); err != nil {
			c.fail(path+".crl_file", "%v", err)
			return nil
		}
	}
	return clientcert.New(cfg, cas, crls)
}

// hostPolicies are the settings of an application that its routes apply.
type hostPolicies struct {
	appRoot       string
	httpsRedirect bool
	// redirectTarget shapes the HTTPS redirect's target (nil: as sent).
	redirectTarget *config.HTTPSRedirectTarget
}

// underACME reports whether a route serves ACME HTTP-01 challenges, which
// must stay reachable over plain HTTP: as ingress-nginx's
// no-tls-redirect-locations, the exemption follows the route's path, not
// the request's.
func underACME(p config.PathMatch) bool {
	path := p.Exact + p.Prefix
	return strings.HasPrefix(path+"/", httpsredirect.ACMEChallengePrefix)
}

func (c *compiler) defaultHandler(path string, app *config.Application, tname string, t *config.Tenant) exchange.Handler {
	host := hostPolicies{appRoot: app.AppRoot, httpsRedirect: app.HTTPSRedirect, redirectTarget: app.HTTPSRedirectTarget}
	switch {
	case app.DefaultRoute != nil:
		return c.chain(path+".default_route", "", &app.DefaultRoute.Action, app.DefaultRoute.Policies, host)
	case t.DefaultRoute != nil:
		return c.chain("tenants."+tname+".default_route", "", &t.DefaultRoute.Action, t.DefaultRoute.Policies, host)
	case app.AppRoot != "":
		return approot.Handler{Path: app.AppRoot, Next: notFoundRoute}
	}
	return notFoundRoute
}

// chain builds a route's handlers. This is the one place that fixes the
// order of the policies, outermost first:
//
//	the application's app_root, then a redirect action (answered before
//	    anything else, like nginx's rewrite phase, which runs before its SSL
//	    redirect and its access checks; validation refuses other policies on
//	    a redirect)
//	→ HTTPS redirect (308)
//	→ global rate limit (429: counted in memcached; ingress-nginx's rewrite
//	    phase)
//	→ local rate limits (503: nginx's preaccess phase)
//	→ allow/deny source ranges (403)
//	→ CORS (a preflight is answered 204 here, before authentication)
//	→ basic auth (401)
//	→ external authentication (401, 403, 302 to sign in, 500)
//	→ request body limit (413)
//	→ ModSecurity (waf: the rule's status, 403 by default; 413 over
//	    SecRequestBodyLimit), which sees the path before a rewrite and a
//	    body already bounded by the limit
//	→ rewrite (path, Host)
//	→ header changes (request now, response when it is written)
//	→ action: proxy (with the route's timeouts and mirrors) or fixed
//	    response
//
// path is the route's field path, for errors; prefix is its path prefix
// ("" for other routes), which redirects and rewrites may replace.
func (c *compiler) chain(path, prefix string, a *config.Action, p *config.Policies, host hostPolicies) exchange.Handler {
	if p == nil {
		p = &config.Policies{}
	}
	var h exchange.Handler
	switch {
	case a.Redirect != nil && a.Redirect.URL != "":
		h = redirect.New(a.Redirect.URL, a.Redirect.Code)
	case a.Redirect != nil:
		h = redirect.NewDerived(a.Redirect, prefix)
	default:
		h = c.policies(path+".policies", prefix, c.action(a, p), p, host)
	}
	if host.appRoot != "" {
		h = approot.Handler{Path: host.appRoot, Next: h}
	}
	return h
}

// policies wraps the action in the policies from HTTPS redirect to header
// changes, innermost first.
func (c *compiler) policies(path, prefix string, h exchange.Handler, p *config.Policies, host hostPolicies) exchange.Handler {
	if p.RequestHeaders != nil || p.ResponseHeaders != nil {
		h = headers.New(p.RequestHeaders, p.ResponseHeaders, h)
	}
	if p.Rewrite != nil {
		h = rewrite.New(p.Rewrite, prefix, h)
	}
	if p.WAF != nil {
		h = c.waf(path+".waf", p.WAF, h)
	}
	if limit := c.bodyLimit(p); limit > 0 {
		h = bodylimit.Handler{Limit: limit, Next: h}
	}
	unchecked := h // what a client that allow/deny let through reaches under satisfy any
	if p.ExternalAuth != nil {
		h = c.externalAuth(path+".external_auth", p.ExternalAuth, h)
	}
	if p.BasicAuth != nil {
		h = c.basicAuth(path+".basic_auth", p.BasicAuth, h)
	}
	h = c.cors(path, p, h)
	if len(p.Allow) > 0 || len(p.Deny) > 0 {
		permitted := h
		anyOf := p.Satisfy == config.SatisfyAny && (p.BasicAuth != nil || p.ExternalAuth != nil)
		if anyOf {
			// satisfy any: the addresses the lists permit skip the
			// authentication (basic credentials still never reach the
			// member); the refused ones may authenticate.
			skip := unchecked
			if p.BasicAuth != nil {
				skip = basicauth.StripCredentials{Next: unchecked}
			}
			permitted = c.cors(path, p, skip)
		}
		filter, err := sourcerange.New(p.Allow, p.Deny, permitted)
		if err != nil {
			c.fail(path, "%v", err)
		} else {
			if anyOf {
				filter.Otherwise(h)
			}
			h = filter
		}
	}
	if p.RateLimit != nil {
		// nginx limits in its preaccess phase: after the HTTPS redirect,
		// before allow/deny and authentication.
		limit, err := ratelimit.New(p.RateLimit, int(c.cfg.Server.Limits.RateLimitZoneClients), c.limits, h)
		if err != nil {
			c.fail(path+".rate_limit", "%v", err)
		} else {
			h = limit
		}
	}
	if p.GlobalRateLimit != nil {
		// ingress-nginx limits globally in its rewrite phase: after the
		// HTTPS redirect, before the local limits.
		limit, err := globalratelimit.New(p.GlobalRateLimit, c.memcached, h)
		if err != nil {
			c.fail(path+".global_rate_limit", "%v", err)
		} else {
			h = limit
		}
	}
	if host.httpsRedirect {
		h = httpsredirect.New(host.redirectTarget, h)
	}
	return h
}

// memcachedClient is the client of cfg: the serving one when its settings
// are the same, else a new one; nil without server.memcached.
func (d *Daemon) memcachedClient(cfg *config.Memcached) *globalratelimit.Client {
	switch {
	case cfg == nil:
		return nil
	case d.memcached.Same(cfg):
		return d.memcached
	}
	return globalratelimit.NewClient(cfg, globalratelimit.Options{Log: d.log, Counters: d.metrics.GlobalRateLimit})
}

// cors wraps h in the route's CORS policy, when it has one.
func (c *compiler) cors(path string, p *config.Policies, h exchange.Handler) exchange.Handler {
	if p.CORS == nil {
		return h
	}
	handler, err := cors.New(p.CORS, h)
	if err != nil {
		c.fail(path+".cors", "%v", err)
		return h
	}
	return handler
}

// bodyLimit is the route's request body limit, 0 for none.
func (c *compiler) bodyLimit(p *config.Policies) int64 {
	if p.MaxBody != nil {
		return int64(*p.MaxBody)
	}
	return c.cfg.Server.Limits.MaxRequestBodyBytes.Or(config.DefaultMaxRequestBodyBytes)
}

// basicAuth loads the htpasswd file and gives it the verification cache of
// its content, kept across reloads while the content is unchanged.
func (c *compiler) basicAuth(path string, cfg *config.BasicAuth, next exchange.Handler) exchange.Handler {
	file, err := basicauth.Load(cfg.File)
	if err != nil {
		c.fail(path+".file", "%v", err)
		return next
	}
	digest := file.Digest()
	cache := c.d.authCaches[digest]
	if cache == nil {
		cache = basicauth.NewCache(authCacheSize)
		c.d.authCaches[digest] = cache
	}
	c.authFiles = append(c.authFiles, digest)
	return basicauth.New(file, cfg.Realm, cache, c.d.authLimiter, next)
}

// externalAuth builds the client to the authentication service, with the
// address rule of members (loopback as server.admin.allow_loopback_members
// allows).
func (c *compiler) externalAuth(path string, cfg *config.ExternalAuth, next exchange.Handler) exchange.Handler {
	opts := extauth.Options{
		AllowLoopback: c.cfg.Server.Admin.AllowLoopbackMembers, Listeners: c.cfg.Server.Listeners, Bound: c.d.bound.get,
		Log: c.d.log, Counters: c.d.metrics.ExternalAuth,
	}
	h, err := extauth.New(cfg, opts, next)
	if err != nil {
		c.fail(path, "%v", err)
		return next
	}
	c.extAuth = append(c.extAuth, h)
	return h
}

// waf returns the ModSecurity handler of cfg, on the engine of its rules:
// one engine per distinct rules, shared by the routes of this
// configuration and kept from the serving one when it has them (building
// the Core Rule Set takes tens of milliseconds and megabytes).
func (c *compiler) waf(path string, cfg *config.WAF, next exchange.Handler) exchange.Handler {
	key := waf.Key(cfg)
	engine := c.wafs[key]
	if engine == nil {
		engine = c.d.wafs[key]
	}
	if engine == nil {
		var err error
		if engine, err = waf.Build(cfg); err != nil {
			c.fail(path, "%v", err)
			return next
		}
	}
	c.wafs[key] = engine
	return waf.New(engine, cfg, c.d.log, next)
}

// closeNewEngines closes the engines a failed compile built, which no
// generation uses.
func (c *compiler) closeNewEngines() {
	for key, engine := range c.wafs {
		if c.d.wafs[key] != engine {
			engine.Close()
		}
	}
}

// authCacheSize bounds the verified credentials remembered per htpasswd
// file.
const authCacheSize = 4096

func (c *compiler) action(a *config.Action, p *config.Policies) exchange.Handler {
	if a.Respond != nil {
		return respond.New(a.Respond.Status, a.Respond.ContentType, a.Respond.Body)
	}
	weighted := a.Pools
	if a.Pool != "" {
		weighted = []config.WeightedPool{{Pool: a.Pool, Weight: 1}}
	}
	targets := make([]proxy.Target, 0, len(weighted))
	for _, wp := range weighted {
		if wp.Status != 0 && wp.Weight > 0 {
			targets = append(targets, proxy.Target{Weight: wp.Weight, Answer: statusAnswer(wp.Status)})
			continue
		}
		pool := c.pools[wp.Pool]
		if (wp.Weight == 0 && !a.Sticky) || pool == nil {
			continue // a weight of 0 sends nothing unless sticky; a missing pool already failed
		}
		targets = append(targets, proxy.Target{Pool: pool, Weight: wp.Weight, Transport: c.transport(pool, p)})
	}
	route := c.proxyRoute(p)
	route.Sticky = a.Sticky
	return proxy.New(targets, route, c.d.proxyOptions)
}

// proxyRoute is what the route's policies add to its forwarding: the
// request and per-try timeouts, the retry policy, and the mirrors (with the route's
// connect and response timeouts, as its own pools).
func (c *compiler) proxyRoute(p *config.Policies) proxy.Route {
	var r proxy.Route
	if t := p.Timeouts; t != nil {
		r.RequestTimeout, r.TryTimeout = t.Request.Std(), t.BackendRequest.Std()
	}
	if rt := p.Retry; rt != nil {
		r.Retry = &proxy.Retry{Codes: rt.Codes, Attempts: -1, Backoff: rt.Backoff.Std(), Within: rt.Within.Std()}
		if rt.Attempts != nil {
			r.Retry.Attempts = *rt.Attempts
		}
		if f := rt.Failures; f != nil {
			r.Retry.Failures = &proxy.Failures{Error: f.Error, Timeout: f.Timeout, InvalidHeader: f.InvalidHeader}
		}
	}
	if rw := p.ResponseRewrite; rw != nil {
		r.Rewrite = &proxy.ResponseRewrite{
			Redirects:     c.textRewrites(rw.Redirects),
			CookieDomains: c.textRewrites(rw.CookieDomains),
			CookiePaths:   c.textRewrites(rw.CookiePaths),
		}
	}
	if b := p.Buffering; b != nil {
		bound := b.Bytes.Or(config.DefaultBufferBytes)
		if b.Request {
			r.BufferRequest = bound
		}
		if b.Response {
			r.BufferResponse = bound
		}
	}
	for _, m := range p.Mirrors {
		pool := c.pools[m.Pool]
		if pool == nil {
			continue // a missing pool already failed
		}
		mirror := proxy.Mirror{Pool: pool, Transport: c.transport(pool, p), Host: m.Host, Path: m.Path, RequestURI: m.RequestURI, NoBody: m.NoBody}
		if m.Fraction != nil {
			mirror.Numerator, mirror.Denominator = m.Fraction.Numerator, m.Fraction.Of()
		}
		r.Mirrors = append(r.Mirrors, mirror)
	}
	if e := p.ErrorPages; e != nil {
		r.ErrorPages = c.errorPages(e, p)
	}
	return r
}

// errorPages compiles a route's error pages: the error backend with its
// pool's own timeouts (bounded by the policy's), the fallback pool with
// the route's, as the route's own pool.
func (c *compiler) errorPages(e *config.ErrorPages, p *config.Policies) *proxy.ErrorPages {
	out := &proxy.ErrorPages{
		OwnAnswersOnly: e.OwnAnswersOnly, Timeout: e.TimeoutOrDefault(),
		Namespace: e.Namespace, Ingress: e.Ingress, Service: e.Service, ServicePort: e.ServicePort,
	}
	for _, s := range e.Statuses {
		out.Statuses.Add(s)
	}
	if pool := c.pools[e.Pool]; pool != nil && e.Pool != "" {
		out.Pool, out.Transport = pool, pool.Transport
	}
	if pool := c.pools[e.FallbackPool]; pool != nil && e.FallbackPool != "" {
		out.Fallback, out.FallbackTransport = pool, c.transport(pool, p)
	}
	return out
}

// textRewrites compiles validated rewrite rules.
func (c *compiler) textRewrites(rules []config.TextRewrite) []proxy.TextRewrite {
	out := make([]proxy.TextRewrite, 0, len(rules))
	for _, r := range rules {
		t, err := proxy.NewTextRewrite(r)
		if err != nil {
			continue // validation compiled it already
		}
		out = append(out, t)
	}
	return out
}

// statusAnswer is the answer of a weighted choice with a status instead of
// a pool.
func statusAnswer(status int) exchange.Handler {
	return respond.New(status, "", http.StatusText(status)+": this share of the route's requests has no backend\n")
}

// transport is the pool's transport, or a variant with the route's
// timeouts and bound of the members' heads.
func (c *compiler) transport(pool *upstream.Pool, p *config.Policies) *upstream.Transport {
	var o upstream.Overrides
	if t := p.Timeouts; t != nil {
		o.Connect, o.Response, o.Send = t.Connect.Std(), t.Response.Std(), t.Send.Std()
	}
	if b := p.Buffering; b != nil {
		o.MaxHeaderBytes = int64(b.HeadBytes)
	}
	if o == (upstream.Overrides{}) {
		return pool.Transport
	}
	variant := c.d.state.VariantOf(pool, o)
	if variant != pool.Transport {
		c.variants = append(c.variants, variant)
	}
	return variant
}

func trustedPrefixes(list []string) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		if p, err := config.ParsePrefix(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
