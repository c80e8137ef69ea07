package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/http1"
	"github.com/ramjet-dev/ramjet/dataplane/listener"
	"github.com/ramjet-dev/ramjet/dataplane/metrics"
	"github.com/ramjet-dev/ramjet/dataplane/router"
)

// Start binds the admin socket, the listeners and the health listener and
// serves them in the background. Readiness turns on once all are bound.
func (d *Daemon) Start() error {
	d.serveErrs = make(chan error, len(d.started.Listeners)+2)
	if err := d.startAdmin(); err != nil {
		return err
	}
	if err := d.startListeners(); err != nil {
		d.closeAll()
		return err
	}
	if err := d.startHealth(); err != nil {
		d.closeAll()
		return err
	}
	d.markReady()
	return nil
}

// startListeners binds and serves the listeners of the serving
// configuration; a reload the admin API received meanwhile waits for it.
func (d *Daemon) startListeners() error {
	d.adminMu.Lock()
	defer d.adminMu.Unlock()
	plan, err := d.planListeners(d.current.Load().config.Server.Listeners)
	if err != nil {
		return err
	}
	d.applyListeners(plan)
	return nil
}

// Run starts the daemon and serves until ctx is done (SIGTERM in ramjetd),
// then shuts down gracefully.
func (d *Daemon) Run(ctx context.Context) error {
	if err := d.Start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		d.Shutdown()
		return nil
	case err := <-d.serveErrs:
		d.closeAll()
		return err
	}
}

// Shutdown drains: /readyz fails at once and keep-alive connections are
// told to close after their next answer, while serving goes on for the drain
// delay (only for what is left of it when POST /v1/drain started the drain
// before); then the listeners close together and requests in flight get up
// to the shutdown timeout, upgraded connections (WebSockets) and admin
// requests included; what is still open then is closed.
func (d *Daemon) Shutdown() {
	over := d.Drain()
	d.log.Info("shutting down once the drain delay is over", "drain_left", d.drainLeft())
	<-over
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	servers := d.serversNow()
	for _, s := range servers {
		wg.Go(func() { s.server.Shutdown(ctx) })
		wg.Go(func() { s.fast.Shutdown(ctx) })
	}
	if d.adminSrv != nil {
		// A POST /v1/drain waiting for the drain delay gets its answer.
		wg.Go(func() { d.adminSrv.Shutdown(ctx) })
	}
	wg.Wait()
	d.waitForUpgraded(ctx)
	for _, s := range servers {
		s.close()
	}
	d.conns.CloseAll()
	d.closeAll()
	d.log.Info("stopped")
}

// waitForUpgraded waits until no upgraded connection is left or ctx ends;
// http.Server.Shutdown does not know about them.
func (d *Daemon) waitForUpgraded(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for d.conns.Len() > 0 {
		select {
		case <-ctx.Done():
			d.log.Info("closing upgraded connections still open", "count", d.conns.Len())
			return
		case <-tick.C:
		}
	}
}

// closeAll closes everything without waiting.
func (d *Daemon) closeAll() {
	for _, s := range d.serversNow() {
		s.close()
	}
	if d.health != nil {
		d.health.Close()
	}
	if d.adminSrv != nil {
		d.adminSrv.Close()
	}
	d.removeSocket()
}

func (d *Daemon) serve(name string, srv *http.Server, ln net.Listener) {
	d.serveUnless(name, srv, ln, nil)
}

// serveUnless serves srv on ln; an error of Serve stops the daemon unless
// retired says the server was being removed.
func (d *Daemon) serveUnless(name string, srv *http.Server, ln net.Listener, retired *atomic.Bool) {
	go func() {
		err := srv.Serve(ln)
		if err == nil || errors.Is(err, http.ErrServerClosed) || (retired != nil && retired.Load()) {
			return
		}
		select {
		case d.serveErrs <- fmt.Errorf("%s: %w", name, err):
		default: // Run stops on the first error; the others add nothing
		}
	}()
}

func (d *Daemon) startAdmin() error {
	path := d.started.Admin.Socket
	if path == "" {
		return nil
	}
	ln, err := admin.Listen(path)
	if err != nil {
		return fmt.Errorf("server.admin.socket: %w", err)
	}
	d.socket = path
	d.adminSrv = admin.NewServer(d)
	d.serve("admin", d.adminSrv, ln)
	return nil
}

// serveListener serves the listener name, whose socket inner is already
// bound, and makes it the active listener of that name.
func (d *Daemon) serveListener(name string, cfg *config.Listener, inner net.Listener) {
	lim := d.started.Limits
	// net/http reads MaxHeaderBytes plus 4096 bytes of slack (for the
	// request line) before it answers 431: ask for the configured limit
	// less the slack, so that a head over the limit is refused. The guard
	// follows heads as long as net/http reads them.
	maxHeader := max(int(lim.MaxHeaderBytes.Or(config.DefaultMaxHeaderBytes))-4096, 1024)
	guardHead := maxHeader + 4096
	_, port, _ := net.SplitHostPort(inner.Addr().String())
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	// The fast HTTP/1 server hands a connection that starts with the
	// HTTP/2 preface over to net/http, which serves it as h2c.
	protocols.SetUnencryptedHTTP2(cfg.H2C)
	guard := listener.Limits{
		MaxHeadBytes: guardHead,
		SendTimeout:  lim.SendTimeout.Or(config.DefaultSendTimeout),
		Linger: listener.Linger{
			Time:    lim.LingeringTime.Or(config.DefaultLingeringTime),
			Timeout: lim.LingeringTimeout.Or(config.DefaultLingeringTimeout),
		},
		Observer: connObserver{d.metrics},
	}
	ln := listener.Plain(inner, guard)
	if cfg.TLS != nil {
		protocols.SetHTTP2(true)
		tlsConfig := &tls.Config{
			MinVersion:     tls.VersionTLS12,
			NextProtos:     []string{"h2", "http/1.1"},
			GetCertificate: d.certificateFor(name),
		}
		tlsConfig.GetConfigForClient = d.handshakeFor(name, tlsConfig)
		ln = listener.NewTLS(inner, tlsConfig, listener.TLSOptions{
			HandshakeTimeout: lim.ReadHeaderTimeout.Or(config.DefaultReadHeaderTimeout),
			Guard:            guard,
			Passthrough:      passthroughHook{d: d, listener: name},
		})
	}
	handler := &entry{d: d, listener: name, tls: cfg.TLS != nil, port: port, sendTimeout: guard.SendTimeout}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: lim.ReadHeaderTimeout.Or(config.DefaultReadHeaderTimeout),
		IdleTimeout:       lim.IdleTimeout.Or(config.DefaultIdleTimeout),
		MaxHeaderBytes:    maxHeader,
		ConnContext:       listener.ConnContext,
		Protocols:         protocols,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: int(orUint32(lim.HTTP2MaxConcurrentStreams, config.DefaultHTTP2MaxConcurrentStreams)),
			// A client that takes nothing of the connection for the send
			// timeout loses it; one that opens no window for a stream
			// loses the stream (recorder.send).
			WriteByteTimeout: guard.SendTimeout,
		},
		ErrorLog: quietLog(d.log),
	}
	fast := &http1.Server{
		Handler:           handler,
		ReadHeaderTimeout: srv.ReadHeaderTimeout,
		IdleTimeout:       srv.IdleTimeout,
		MaxHeaderBytes:    guardHead,
		ConnContext:       listener.ConnContext,
		Serves:            listener.CarriesHTTP1,
		ErrorLog:          srv.ErrorLog,
	}
	s := &namedServer{name: name, cfg: *cfg, server: srv, fast: fast, inner: inner, ln: fast.Listener(ln)}
	d.addServer(s)
	d.active[name] = s
	d.bound.set(name, inner.Addr().String())
	d.serveUnless("listener "+name, srv, s.ln, &s.retired)
}

// certificateFor chooses certificates from the serving generation's store
// of the listener, so a reload changes certificates without a restart.
func (d *Daemon) certificateFor(listenerName string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		return d.current.Load().certs[listenerName].GetCertificate(hello)
	}
}

// handshakeFor asks for a client certificate in the handshakes whose
// server name belongs, in the serving generation, to an application with
// client_auth; the others get base unchanged.
func (d *Daemon) handshakeFor(listenerName string, base *tls.Config) func(*tls.ClientHelloInfo) (*tls.Config, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		rt, _, err := d.current.Load().tables.of(listenerName).Lookup(router.NormalizeHost(hello.ServerName), "/", nil)
		if err != nil || rt.app.clientAuth == nil {
			return nil, nil
		}
		return rt.app.clientAuth.Handshake(base), nil
	}
}

func (d *Daemon) startHealth() error {
	addr := d.started.Health.Address
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server.health.address: %w", err)
	}
	d.bound.set("health", ln.Addr().String())
	metricsHandler := promhttp.HandlerFor(d.metrics.Registry, promhttp.HandlerOpts{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			http.Error(w, "the health listener answers GET and HEAD only", http.StatusMethodNotAllowed)
		case r.URL.Path == "/healthz":
			io.WriteString(w, "ok\n")
		case r.URL.Path == "/readyz" && d.isReady():
			io.WriteString(w, "ready\n")
		case r.URL.Path == "/readyz":
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		case r.URL.Path == "/metrics":
			metricsHandler.ServeHTTP(w, r)
		default:
			http.Error(w, "the health listener serves /healthz, /readyz and /metrics only", http.StatusNotFound)
		}
	})
	d.health = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, ErrorLog: quietLog(d.log)}
	d.serve("health", d.health, ln)
	return nil
}

// Status describes what is serving; the admin API shows it.
func (d *Daemon) Status() admin.Status {
	gen := d.current.Load()
	listeners := d.bound.all()
	return admin.Status{
		Generation:   gen.number,
		ConfigDigest: gen.digest,
		LoadedAt:     gen.loaded,
		Ready:        d.isReady(),
		Listeners:    listeners,
	}
}

// quietLog sends net/http's server errors to slog at debug level: they are
// about clients (TLS handshakes, broken connections), not about ramjetd. A
// recovered panic is a bug of ours and is logged as an error.
func quietLog(l *slog.Logger) *log.Logger {
	return log.New(logWriter{l}, "", 0)
}

type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.Contains(msg, ": panic serving ") {
		w.l.Error("http server: recovered from a panic", "message", msg)
	} else {
		w.l.Debug("http server", "message", msg)
	}
	return len(p), nil
}

func orUint32(v, def uint32) uint32 {
	if v == 0 {
		return def
	}
	return v
}

// connObserver counts what the listeners' Guards did to connections.
type connObserver struct{ m *metrics.Metrics }

func (o connObserver) SendTimedOut() { o.m.SendTimeouts.Inc() }

func (o connObserver) Lingered(end listener.LingerEnd) {
	o.m.LingeringCloses.WithLabelValues(end.String()).Inc()
}
