package daemon

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/proxy"
	"github.com/ramjet-dev/ramjet/dataplane/router"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
	"github.com/ramjet-dev/ramjet/policies/bodylimit"
	"github.com/ramjet-dev/ramjet/policies/httpsredirect"
	"github.com/ramjet-dev/ramjet/policies/redirect"
	"github.com/ramjet-dev/ramjet/policies/respond"
)

// generation is one compiled configuration. It never changes after it is
// built; requests read it through an atomic pointer.
type generation struct {
	number  uint64
	digest  string
	loaded  time.Time
	config  *config.Config
	table   *router.Table[*route]
	certs   map[string]*certs.Store // by TLS listener name
	trusted []netip.Prefix
	pools   map[string]*upstream.Pool
	// bodyTimeout bounds each read of a request body.
	bodyTimeout time.Duration
}

// route is what a lookup finds: the compiled handler chain and the
// application it belongs to.
type route struct {
	handler exchange.Handler
	app     *application
}

// application carries what every route of an application shares.
type application struct {
	tenant, name string
	requests     *[6]prometheus.Counter
}

// notFoundRoute answers requests that match a domain but no route, when
// neither the application nor its tenant has a default route.
var notFoundRoute = respond.New(http.StatusNotFound, "", "Not Found: no route of this host matches the request\n")

// compiler builds a generation. Its errors are config.FieldErrors, so that
// refusals read like validation errors.
type compiler struct {
	d      *Daemon
	cfg    *config.Config
	errs   []error
	pools  map[string]*upstream.Pool
	stores map[string]*certs.Store
}

// compile validates cfg and builds the generation that serves it. Files
// (certificates, keys, CA bundles) are read here. Nothing of the running
// generation changes, whatever the outcome.
func (d *Daemon) compile(cfg *config.Config, raw []byte) (*generation, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &compiler{d: d, cfg: cfg, pools: map[string]*upstream.Pool{}, stores: map[string]*certs.Store{}}
	c.checkFixed()
	c.buildPools()
	c.buildCertStores()
	sites := c.buildSites()
	if len(c.errs) > 0 {
		return nil, joinErrors(c.errs)
	}
	table, err := router.Build(sites)
	if err != nil {
		return nil, &config.FieldError{Path: "tenants", Message: err.Error()}
	}
	sum := sha256.Sum256(raw)
	return &generation{
		digest:  hex.EncodeToString(sum[:]),
		loaded:  time.Now(),
		config:  cfg,
		table:   table,
		certs:   c.stores,
		trusted: trustedPrefixes(cfg.Server.TrustedProxies),
		pools:   c.pools,

		bodyTimeout: cfg.Server.Limits.ReadBodyTimeout.Or(config.DefaultReadBodyTimeout),
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
			out = append(out, appCert{path: path + ".tls", domain: d, cert: cert})
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
		info := &application{tenant: tname, name: aname, requests: c.d.metrics.RequestCounters(tname, aname)}
		site := router.Site[*route]{Domains: app.Domains}
		for _, r := range app.Routes {
			redirect := app.HTTPSRedirect
			if r.HTTPSRedirect != nil {
				redirect = *r.HTTPSRedirect
			}
			site.Routes = append(site.Routes, router.Route[*route]{
				Match: r.Match,
				Value: &route{handler: c.chain(&r.Action, redirect), app: info},
			})
		}
		site.Default = &route{handler: c.defaultHandler(app, tenant), app: info}
		sites = append(sites, site)
	})
	return sites
}

func (c *compiler) defaultHandler(app *config.Application, t *config.Tenant) exchange.Handler {
	switch {
	case app.DefaultRoute != nil:
		return c.chain(&app.DefaultRoute.Action, app.HTTPSRedirect)
	case t.DefaultRoute != nil:
		return c.chain(&t.DefaultRoute.Action, app.HTTPSRedirect)
	}
	return notFoundRoute
}

// chain builds a route's handlers, outermost first:
//
//	HTTPS redirect → request body limit → action (proxy, redirect, respond)
//
// The policies of the policies/ packages join this chain as they are added;
// this is the one place that fixes their order.
func (c *compiler) chain(a *config.Action, httpsRedirect bool) exchange.Handler {
	h := c.action(a)
	limit := c.cfg.Server.Limits.MaxRequestBodyBytes.Or(config.DefaultMaxRequestBodyBytes)
	h = bodylimit.Handler{Limit: limit, Next: h}
	if httpsRedirect {
		h = httpsredirect.Handler{Next: h}
	}
	return h
}

func (c *compiler) action(a *config.Action) exchange.Handler {
	switch {
	case a.Redirect != nil:
		return redirect.New(a.Redirect.URL, a.Redirect.Code)
	case a.Respond != nil:
		return respond.New(a.Respond.Status, a.Respond.ContentType, a.Respond.Body)
	case a.Pool != "":
		return proxy.New([]proxy.Target{{Pool: c.pools[a.Pool], Weight: 1}}, c.d.proxyOptions)
	}
	targets := make([]proxy.Target, 0, len(a.Pools))
	for _, wp := range a.Pools {
		if wp.Weight > 0 {
			targets = append(targets, proxy.Target{Pool: c.pools[wp.Pool], Weight: wp.Weight})
		}
	}
	return proxy.New(targets, c.d.proxyOptions)
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
