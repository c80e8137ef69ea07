// Package daemon is ramjetd: it loads the configuration, compiles it into
// an immutable generation, serves the listeners, the health listener and the
// admin API, swaps generations on reload without touching a connection, and
// drains on shutdown.
package daemon

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-multierror"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/http1"
	"github.com/ramjet-dev/ramjet/dataplane/metrics"
	"github.com/ramjet-dev/ramjet/dataplane/proxy"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
	"github.com/ramjet-dev/ramjet/policies/basicauth"
	"github.com/ramjet-dev/ramjet/policies/globalratelimit"
	"github.com/ramjet-dev/ramjet/policies/ratelimit"
	"github.com/ramjet-dev/ramjet/policies/respond"
	"github.com/ramjet-dev/ramjet/policies/waf"
)

// The defaults of ramjetd's --drain-delay and --shutdown-timeout.
const (
	DefaultDrainDelay      = 5 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
)

// Options configure a Daemon.
type Options struct {
	// ConfigPath is the configuration file, read at start and on every
	// reload.
	ConfigPath string
	// DrainDelay is how long the daemon keeps serving after a shutdown
	// begins, with /readyz failing, so that load balancers stop sending.
	// Zero shuts down at once.
	DrainDelay time.Duration
	// ShutdownTimeout bounds the wait for requests in flight once the
	// listeners are closed, at shutdown and for a listener a reload
	// removes. Zero waits for none.
	ShutdownTimeout time.Duration
	// Log receives the daemon's logs; nil means slog.Default().
	Log *slog.Logger
}

// Daemon is one ramjetd process's serving state.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics.Metrics
	state   *upstream.State
	conns   *proxy.ConnTracker

	proxyOptions proxy.Options
	fakeCert     *tls.Certificate

	// exchanges and recorders lend the per-request objects.
	exchanges sync.Pool
	recorders sync.Pool

	// unknownHost answers requests whose host no application serves.
	unknownHost *route
	// pathTooLong and valueTooLong answer requests whose path, or whose
	// values tested by a header or cookie regex, are longer than the
	// regexes of their host read (server.limits.max_regex_input_bytes).
	pathTooLong, valueTooLong *route
	// authCaches are the basic-auth verification caches by htpasswd
	// content digest, kept across reloads while a generation uses them.
	authCaches map[[32]byte]*basicauth.Cache
	// limits holds the rate-limit zones' tables across reloads.
	limits *ratelimit.Store
	// memcached is the serving generation's global rate limit client;
	// only reloads (under adminMu) change it.
	memcached *globalratelimit.Client
	// wafs are the ModSecurity engines of the serving generation, by
	// waf.Key; only reloads (under adminMu) change the map.
	wafs map[[32]byte]*waf.Engine
	// authLimiter bounds the password hashes verified at once: half the
	// cores, so that guessing passwords cannot take the CPU from traffic.
	authLimiter *basicauth.Limiter

	current atomic.Pointer[generation]
	ready   atomic.Bool
	drain   drain
	// adminMu serialises reloads and member updates.
	adminMu sync.Mutex
	// started is the server section the process started with; the parts
	// that bind sockets cannot change on reload.
	started *config.Server

	// servers are the listeners' servers, those of removed listeners
	// included until they close; drain.mu guards the slice.
	servers []*namedServer
	// active are the servers of the configuration's listeners by name;
	// adminMu guards the map.
	active    map[string]*namedServer
	health    *http.Server
	adminSrv  *http.Server
	socket    string
	bound     boundAddresses
	serveErrs chan error
}

type namedServer struct {
	name   string
	cfg    config.Listener // what it was started with
	server *http.Server
	fast   *http1.Server // serves the simple HTTP/1.1 requests of server's connections
	inner  net.Listener  // the bound socket
	ln     net.Listener  // what server accepts from
	// retired is set when a reload removes the listener: its socket closes
	// and its requests finish.
	retired atomic.Bool
}

// stopKeepAlives makes both servers close connections after their next
// answer, and close idle ones.
func (s *namedServer) stopKeepAlives() {
	s.server.SetKeepAlivesEnabled(false)
	s.fast.SetKeepAlivesEnabled(false)
}

// close closes both servers' connections at once.
func (s *namedServer) close() {
	s.server.Close()
	s.fast.Close()
}

// New loads and compiles the configuration file. It binds nothing; Start
// does.
func New(opts Options) (*Daemon, error) {
	d := &Daemon{
		opts:    opts,
		log:     opts.Log,
		metrics: metrics.New(),
		state:   upstream.NewState(),
		conns:   proxy.NewConnTracker(),
		active:  map[string]*namedServer{},

		authCaches:  map[[32]byte]*basicauth.Cache{},
		limits:      ratelimit.NewStore(),
		authLimiter: basicauth.NewLimiter(runtime.GOMAXPROCS(0)/2, 2*time.Second),
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	d.exchanges.New = func() any { return new(exchange.Request) }
	d.recorders.New = func() any { return new(recorder) }
	d.proxyOptions = proxy.Options{Buffers: proxy.NewBufferPool(), Conns: d.conns, Mirrors: proxy.NewMirrorLimit(proxy.DefaultMirrorsInFlight),
		Budget: proxy.NewBufferBudget(proxy.BufferedBytesLimit), Log: d.log}
	d.metrics.WatchUpstreams(d.state.Pools)
	d.unknownHost = &route{
		handler: respond.New(http.StatusNotFound, "", "Not Found: no application serves this host\n"),
		app:     &application{requests: d.metrics.RequestCounters("", "")},
	}
	d.pathTooLong = &route{
		handler: respond.New(http.StatusRequestURITooLong, "", "URI Too Long: the path is longer than the regex routes of this host read\n"),
		app:     d.unknownHost.app,
	}
	d.valueTooLong = &route{
		handler: respond.New(http.StatusRequestHeaderFieldsTooLarge, "", "Request Header Fields Too Large: the values a header, cookie or query regex of this host tests are longer than it reads\n"),
		app:     d.unknownHost.app,
	}
	fake, err := certs.SelfSigned(certs.FakeCommonName, "ingress.local")
	if err != nil {
		return nil, fmt.Errorf("generating the default certificate: %w", err)
	}
	d.fakeCert = fake
	if _, err := d.load(); err != nil {
		return nil, err
	}
	d.started = &d.current.Load().config.Server
	return d, nil
}

// Check reads, validates and compiles a configuration file exactly as a
// load would, without serving it: `ramjetd validate`.
func Check(path string) error {
	d := &Daemon{metrics: metrics.New(), state: upstream.NewState(), log: slog.Default(), authCaches: map[[32]byte]*basicauth.Cache{}, limits: ratelimit.NewStore()}
	fake, err := certs.SelfSigned(certs.FakeCommonName)
	if err != nil {
		return err
	}
	d.fakeCert = fake
	cfg, raw, err := config.ReadFile(path)
	if err != nil {
		return err
	}
	gen, err := d.compile(cfg, raw)
	if err == nil {
		d.discard(gen)
	}
	return err
}

// Reload loads the configuration file again; the admin API calls it. A
// refused file is an *admin.ConfigError and changes nothing that serves.
func (d *Daemon) Reload() (uint64, error) {
	d.adminMu.Lock()
	defer d.adminMu.Unlock()
	return d.load()
}

// load reads, compiles and swaps in the configuration file, and changes
// the listeners once the daemon serves them (see listenerPlan).
func (d *Daemon) load() (uint64, error) {
	cfg, raw, err := config.ReadFile(d.opts.ConfigPath)
	if err == nil {
		var gen *generation
		if gen, err = d.compile(cfg, raw); err == nil {
			var plan *listenerPlan
			if plan, err = d.planReload(cfg); err == nil {
				number := d.swap(gen)
				d.applyListeners(plan)
				return number, nil
			}
			d.discard(gen)
		}
		// Compiling registered the metric series of the refused file's
		// applications and pools; drop those the serving one lacks.
		current := d.current.Load()
		d.metrics.Forget(applicationsOf(cfg), applicationsOf(configOf(current)), poolsOf(cfg), poolsOf(configOf(current)))
	}
	d.metrics.ReloadFailures.Inc()
	d.log.Warn("configuration refused; the previous one keeps serving", "file", d.opts.ConfigPath, "error", err)
	return 0, &admin.ConfigError{Problems: problems(err)}
}

// planReload binds the sockets cfg's listeners need, once Start has
// served the listeners; before, Start binds them all.
func (d *Daemon) planReload(cfg *config.Config) (*listenerPlan, error) {
	if len(d.active) == 0 {
		return &listenerPlan{}, nil
	}
	return d.planListeners(cfg.Server.Listeners)
}

// discard releases what compiling a generation that will not serve built:
// its external authentication clients and the ModSecurity engines the
// serving generation does not share.
func (d *Daemon) discard(gen *generation) {
	for _, h := range gen.externalAuth {
		h.Close()
	}
	for key, engine := range gen.wafs {
		if d.wafs[key] != engine {
			engine.Close()
		}
	}
	if gen.memcached != d.memcached {
		gen.memcached.Close()
	}
}

// swap makes gen the serving generation. Requests already running finish
// on the generation they started with.
func (d *Daemon) swap(gen *generation) uint64 {
	old := d.current.Load()
	gen.number = 1
	if old != nil {
		gen.number = old.number + 1
	}
	d.current.Store(gen)
	d.state.Commit(gen.pools, gen.variants)
	if old != nil {
		for _, h := range old.externalAuth {
			h.Close()
		}
	}
	d.keepAuthCaches(gen.authFiles)
	d.limits.Keep(gen.limits)
	d.keepEngines(gen.wafs)
	if gen.memcached != d.memcached {
		// requests still running on the old client finish: Close only
		// drops its idle connections.
		d.memcached.Close()
		d.memcached = gen.memcached
	}
	d.metrics.Forget(applicationsOf(configOf(old)), applicationsOf(gen.config), poolsOf(configOf(old)), poolsOf(gen.config))
	d.metrics.Reloads.Inc()
	d.metrics.Generation.Set(float64(gen.number))
	d.metrics.LastReload.Set(float64(gen.loaded.Unix()))
	d.log.Info("configuration loaded", "generation", gen.number, "digest", gen.digest[:12], "pools", len(gen.pools))
	return gen.number
}

// keepEngines makes inUse the engines reloads reuse and closes those it
// lacks. Requests still running on the old generation finish: closing an
// engine only releases what Coraza caches for it.
func (d *Daemon) keepEngines(inUse map[[32]byte]*waf.Engine) {
	for key, engine := range d.wafs {
		if inUse[key] != engine {
			engine.Close()
		}
	}
	d.wafs = inUse
}

// keepAuthCaches drops the basic-auth caches of files no longer in use.
func (d *Daemon) keepAuthCaches(inUse [][32]byte) {
	keep := map[[32]byte]bool{}
	for _, digest := range inUse {
		keep[digest] = true
	}
	for digest := range d.authCaches {
		if !keep[digest] {
			delete(d.authCaches, digest)
		}
	}
}

// SetMembers replaces the members of an api pool without a reload, once
// they pass the rules of an api pool's members in the serving
// configuration (a *admin.MembersError when they do not).
func (d *Daemon) SetMembers(pool string, members []config.Member) error {
	d.adminMu.Lock()
	defer d.adminMu.Unlock()
	err := config.ValidateMembers(members, d.current.Load().config.Server.Admin.AllowLoopbackMembers)
	if err != nil {
		err = &admin.MembersError{Err: err}
	} else {
		err = d.state.SetMembers(pool, members)
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	d.metrics.MemberUpdates.WithLabelValues(result).Inc()
	return err
}

// defaultCertificate is a TLS listener's default certificate: its files,
// or the certificate generated at start.
func (d *Daemon) defaultCertificate(t *config.ListenerTLS) (*tls.Certificate, error) {
	if t.CertFile == "" {
		return d.fakeCert, nil
	}
	return certs.LoadFiles(t.CertFile, t.KeyFile)
}

// problems lists the messages of a load error.
func problems(err error) []string {
	var list []string
	for _, e := range config.Errors(err) {
		list = append(list, e.Error())
	}
	return list
}

func joinErrors(errs []error) error {
	return &multierror.Error{Errors: errs, ErrorFormat: config.ListFormat}
}

// fixedDifference names the first part of the server section that differs
// in a way only a restart can apply, or returns "".
func fixedDifference(started, next *config.Server) string {
	switch {
	case started.Health != next.Health:
		return "the health listener (server.health)"
	case started.Admin != next.Admin:
		return "the admin socket (server.admin)"
	case !reflect.DeepEqual(serverLimits(started.Limits), serverLimits(next.Limits)):
		return "the connection limits (server.limits other than max_request_body_bytes, read_body_timeout and max_regex_input_bytes)"
	}
	return ""
}

// serverLimits are the limits the http.Servers hold; the request body limit
// is applied per route and the regex input bound by the routing table, and
// may change.
func serverLimits(l config.Limits) config.Limits {
	l.MaxRequestBodyBytes = 0
	l.ReadBodyTimeout = 0
	l.MaxRegexInputBytes = 0
	return l
}

// isReady reports whether the daemon serves a configuration and is not
// draining.
func (d *Daemon) isReady() bool { return d.ready.Load() }

// removeSocket removes the admin socket file when it is still ours.
func (d *Daemon) removeSocket() {
	if d.socket != "" {
		os.Remove(d.socket)
	}
}
