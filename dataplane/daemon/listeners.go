package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// A reload changes server.listeners in three steps, so that a listener
// that cannot bind refuses the whole reload and the serving configuration
// keeps all its listeners:
//
//  1. planListeners binds the sockets of the listeners that are new or
//     changed (address, TLS or h2c on or off) before anything is swapped; a
//     failure closes what it bound and names the listener;
//  2. the generation is swapped;
//  3. applyListeners serves the new sockets, then retires the servers of
//     the listeners that are gone or changed: they stop accepting at once,
//     and their requests in flight get up to the shutdown timeout before
//     their connections are closed.
//
// A listener whose name, address, TLS and h2c stay is not touched. A new
// listener whose address is one a running listener was configured with
// (a listener renamed, TLS turned on or off, two addresses swapped) takes
// a duplicate of that socket instead of binding again, so the port never
// stops accepting.

// listenerPlan is what a reload does to the listeners.
type listenerPlan struct {
	bind   []binding
	retire []*namedServer
}

// binding is a listener to serve on a socket already bound.
type binding struct {
	name  string
	cfg   *config.Listener
	inner net.Listener
}

// planListeners binds what next needs beyond the active listeners. On
// error nothing is left bound.
func (d *Daemon) planListeners(next map[string]*config.Listener) (*listenerPlan, error) {
	plan := &listenerPlan{}
	for _, name := range sortedKeys(d.active) {
		if s := d.active[name]; !unchanged(s, next[name]) {
			plan.retire = append(plan.retire, s)
		}
	}
	for _, name := range sortedKeys(next) {
		cfg := next[name]
		if unchanged(d.active[name], cfg) {
			continue
		}
		inner, err := d.bindSocket(cfg.Address)
		if err != nil {
			plan.close()
			return nil, &config.FieldError{Path: "server.listeners." + name + ".address", Message: fmt.Sprintf("cannot listen on %s: %v", cfg.Address, bindReason(err))}
		}
		plan.bind = append(plan.bind, binding{name: name, cfg: cfg, inner: inner})
	}
	return plan, nil
}

// unchanged reports whether the running server s serves cfg as it is.
func unchanged(s *namedServer, cfg *config.Listener) bool {
	return s != nil && cfg != nil && s.cfg.Address == cfg.Address && (s.cfg.TLS == nil) == (cfg.TLS == nil) && s.cfg.H2C == cfg.H2C
}

// bindSocket listens on addr, or duplicates the socket of the active
// listener configured with addr (when its port is fixed).
func (d *Daemon) bindSocket(addr string) (net.Listener, error) {
	if _, port, _ := net.SplitHostPort(addr); port != "0" {
		for _, s := range d.active {
			if s.cfg.Address == addr {
				return duplicate(s.inner)
			}
		}
	}
	return net.Listen("tcp", addr)
}

// duplicate returns a listener on the same socket as ln, which stays open
// when ln is closed.
func duplicate(ln net.Listener) (net.Listener, error) {
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return net.FileListener(f)
}

// bindReason is the system's reason for a failed bind ("address already in
// use", "permission denied"), without the operation around it.
func bindReason(err error) error {
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		return sys.Err
	}
	return err
}

// close closes the sockets a refused plan bound.
func (p *listenerPlan) close() {
	for _, b := range p.bind {
		b.inner.Close()
	}
}

// applyListeners serves the plan's new sockets and retires the servers it
// replaces or removes.
func (d *Daemon) applyListeners(p *listenerPlan) {
	for _, b := range p.bind {
		d.serveListener(b.name, b.cfg, b.inner)
		d.log.Info("listener serving", "listener", b.name, "address", d.bound.get(b.name), "tls", b.cfg.TLS != nil)
	}
	for _, s := range p.retire {
		d.retire(s)
	}
}

// retire stops s accepting at once and lets its requests finish for up to
// the shutdown timeout in the background; then its connections are
// closed. Upgraded connections (WebSockets) are not the listener's any
// more: they end when either side closes them, or at shutdown.
func (d *Daemon) retire(s *namedServer) {
	if d.active[s.name] == s {
		delete(d.active, s.name)
		d.bound.remove(s.name)
	}
	s.retired.Store(true)
	s.ln.Close()
	d.log.Info("listener removed; its requests in flight finish", "listener", s.name, "address", s.inner.Addr().String(), "within", d.opts.ShutdownTimeout)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), d.opts.ShutdownTimeout)
		defer cancel()
		var wg sync.WaitGroup
		wg.Go(func() { s.server.Shutdown(ctx) })
		wg.Go(func() { s.fast.Shutdown(ctx) })
		wg.Wait()
		s.close()
		d.removeServer(s)
	}()
}
