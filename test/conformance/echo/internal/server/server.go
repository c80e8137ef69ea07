// Package server opens the listeners of one echo server process for its
// configured mode and runs them until the context ends or one fails.
//
// Listeners by mode (names as Running.Addr takes them):
//
//	HTTP  http  HTTP_PORT   HTTP/1.1, WebSocket at /ws
//	      h2c   H2C_PORT    HTTP/2 with prior knowledge (and HTTP/1.1 asking for h2c)
//	      https HTTPS_PORT  HTTPS, h2 and http/1.1, with a certificate and key
//	gRPC  grpc  HTTP_PORT   the gRPC echo service, plaintext
//	      grpcs HTTPS_PORT  the same over TLS, with a certificate and key
//	TCP   tcp   TCP_PORT    the TCP echo protocol
//	      tls   TLS_PORT    the same inside TLS, with a certificate and key
//	UDP   udp   UDP_PORT    the UDP echo
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/certs"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/grpcecho"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/httpecho"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/tcpecho"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/udpecho"
)

// Running is a started echo server.
type Running struct {
	addrs  map[string]net.Addr
	done   chan error
	units  int
	cancel context.CancelFunc
}

// Addr is the bound address of the listener name, or nil if the mode has
// no such listener.
func (r *Running) Addr(name string) net.Addr { return r.addrs[name] }

// Wait blocks until every listener has stopped: after the context of Start
// ended (nil) or after the first listener failed (that error; the others
// are stopped).
func (r *Running) Wait() error {
	var first error
	for range r.units {
		if err := <-r.done; err != nil && first == nil {
			first = err
			r.cancel()
		}
	}
	r.cancel()
	return first
}

// unit is one listener and how to run it until ctx ends.
type unit struct {
	name  string
	addr  net.Addr
	serve func(ctx context.Context) error
}

// Start opens every listener of c's mode and starts serving. A listener
// that cannot be opened, or a certificate that cannot be loaded, is an
// error and nothing is left open. A nil log discards.
func Start(ctx context.Context, c config.Config, log *slog.Logger) (*Running, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var tc *tls.Config
	if c.TLS() {
		clientCA := ""
		if c.Mode == config.HTTP {
			clientCA = c.ClientCAFile
		}
		var err error
		if tc, err = certs.Server(c.CertFile, c.KeyFile, clientCA); err != nil {
			return nil, err
		}
	}
	units, err := open(c, tc, log)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Running{addrs: map[string]net.Addr{}, done: make(chan error, len(units)), units: len(units), cancel: cancel}
	for _, u := range units {
		r.addrs[u.name] = u.addr
		log.Info("listening", "mode", c.Mode.String(), "listener", u.name, "address", u.addr.String())
		go func() {
			err := u.serve(ctx)
			if err != nil {
				err = fmt.Errorf("%s listener: %w", u.name, err)
			}
			r.done <- err
		}()
	}
	return r, nil
}

// open opens the listeners of the mode, closing all of them on failure.
func open(c config.Config, tc *tls.Config, log *slog.Logger) ([]unit, error) {
	var units []unit
	var closers []func()
	fail := func(err error) ([]unit, error) {
		for _, f := range closers {
			f()
		}
		return nil, err
	}
	listen := func(name string, port int) (net.Listener, error) {
		l, err := net.Listen("tcp", c.Addr(port))
		if err != nil {
			return nil, fmt.Errorf("%s listener: %w", name, err)
		}
		closers = append(closers, func() { _ = l.Close() })
		return l, nil
	}
	type spec struct {
		name string
		port int
		on   bool
	}
	var specs []spec
	switch c.Mode {
	case config.HTTP:
		specs = []spec{{"http", c.HTTPPort, true}, {"h2c", c.H2CPort, true}, {"https", c.HTTPSPort, tc != nil}}
	case config.GRPC:
		specs = []spec{{"grpc", c.HTTPPort, true}, {"grpcs", c.HTTPSPort, tc != nil}}
	case config.TCP:
		specs = []spec{{"tcp", c.TCPPort, true}, {"tls", c.TLSPort, tc != nil}}
	case config.UDP:
		pc, err := net.ListenPacket("udp", c.Addr(c.UDPPort))
		if err != nil {
			return nil, fmt.Errorf("udp listener: %w", err)
		}
		return []unit{{name: "udp", addr: pc.LocalAddr(), serve: func(ctx context.Context) error {
			return udpecho.Serve(ctx, pc, c.Pod, log)
		}}}, nil
	}
	ls := map[string]net.Listener{}
	for _, s := range specs {
		if !s.on {
			continue
		}
		l, err := listen(s.name, s.port)
		if err != nil {
			return fail(err)
		}
		ls[s.name] = l
	}
	var h *httpecho.Handler
	if c.Mode == config.HTTP {
		// One handler for every listener, so retry counts are shared.
		h = httpecho.New(c.Pod, strconv.Itoa(port(ls["http"])), log)
	}
	for _, s := range specs {
		if l := ls[s.name]; l != nil {
			units = append(units, unit{name: s.name, addr: l.Addr(), serve: serveFunc(c, s.name, l, ls, h, tc, log)})
		}
	}
	return units, nil
}

func port(l net.Listener) int {
	if l == nil {
		return 0
	}
	return l.Addr().(*net.TCPAddr).Port
}

// serveFunc returns how the listener name runs; ls holds all listeners
// of the mode (the echoed ports are the bound ones), h is the HTTP mode's
// handler.
func serveFunc(c config.Config, name string, l net.Listener, ls map[string]net.Listener, h *httpecho.Handler, tc *tls.Config, log *slog.Logger) func(context.Context) error {
	switch name {
	case "http", "h2c", "https":
		kind := map[string]httpecho.Kind{"http": httpecho.Plain, "h2c": httpecho.Cleartext, "https": httpecho.Secure}[name]
		s := httpecho.NewServer(h, kind, tc)
		return func(ctx context.Context) error {
			return serveHTTP(ctx, s, l, kind == httpecho.Secure)
		}
	case "grpc", "grpcs":
		var creds *tls.Config
		if name == "grpcs" {
			creds = tc
		}
		s := grpcecho.NewServer(c.Pod, creds)
		return func(ctx context.Context) error {
			stop := context.AfterFunc(ctx, s.GracefulStop)
			defer stop()
			return s.Serve(l)
		}
	default: // tcp, tls
		s := &tcpecho.Server{Pod: c.Pod, TCPPort: port(ls["tcp"]), TLSPort: c.TLSPort, Log: log}
		if t := ls["tls"]; t != nil {
			s.TLSPort = port(t)
		}
		var conf *tls.Config
		if name == "tls" {
			conf = tc
		}
		return func(ctx context.Context) error { return s.Serve(ctx, l, conf) }
	}
}

// serveHTTP serves s on l until ctx ends, then shuts it down, giving open
// requests a few seconds.
func serveHTTP(ctx context.Context, s *http.Server, l net.Listener, secure bool) error {
	done := make(chan error, 1)
	go func() {
		if secure {
			done <- s.ServeTLS(l, "", "")
		} else {
			done <- s.Serve(l)
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		_ = s.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
