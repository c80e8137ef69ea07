package daemon

import (
	"slices"
	"sync"
	"time"
)

// drain is the first part of a shutdown, which the admin API (POST
// /v1/drain, run by `ramjetd drain` from a Kubernetes preStop hook) may
// start before the SIGTERM: readiness off, keep-alive clients told to
// close, serving goes on for the drain delay.
type drain struct {
	mu sync.Mutex
	// over is closed when the drain delay has passed; nil until a drain
	// starts.
	over chan struct{}
	// ends is when the drain delay is over.
	ends time.Time
}

// Drain starts the drain unless it has started: /readyz fails at once and
// keep-alive connections are told to close after their next answer, while
// serving goes on. It returns a channel closed when the drain delay,
// counted from the first call, is over; a later Shutdown waits only for
// what is left of it.
func (d *Daemon) Drain() <-chan struct{} {
	d.drain.mu.Lock()
	defer d.drain.mu.Unlock()
	if d.drain.over == nil {
		over := make(chan struct{})
		d.drain.over = over
		d.drain.ends = time.Now().Add(d.opts.DrainDelay)
		d.ready.Store(false)
		for _, s := range d.servers {
			s.stopKeepAlives()
		}
		d.log.Info("draining: readiness off, still serving", "drain_delay", d.opts.DrainDelay)
		time.AfterFunc(d.opts.DrainDelay, func() { close(over) })
	}
	return d.drain.over
}

// drainLeft is what is left of the drain delay; zero before a drain starts
// and after it is over.
func (d *Daemon) drainLeft() time.Duration {
	d.drain.mu.Lock()
	defer d.drain.mu.Unlock()
	if d.drain.over == nil {
		return 0
	}
	return max(time.Until(d.drain.ends), 0).Round(time.Millisecond)
}

// addServer adds a listener's servers; a drain the admin API started while
// the daemon was starting reaches them too.
func (d *Daemon) addServer(s *namedServer) {
	d.drain.mu.Lock()
	defer d.drain.mu.Unlock()
	if d.drain.over != nil {
		s.stopKeepAlives()
	}
	d.servers = append(d.servers, s)
}

// removeServer forgets a listener's servers once they are closed.
func (d *Daemon) removeServer(s *namedServer) {
	d.drain.mu.Lock()
	defer d.drain.mu.Unlock()
	d.servers = slices.DeleteFunc(d.servers, func(o *namedServer) bool { return o == s })
}

// serversNow is a copy of the servers: the active listeners' and those of
// removed listeners still finishing their requests.
func (d *Daemon) serversNow() []*namedServer {
	d.drain.mu.Lock()
	defer d.drain.mu.Unlock()
	return slices.Clone(d.servers)
}

// markReady turns readiness on once everything is bound, unless a drain
// has started.
func (d *Daemon) markReady() {
	d.drain.mu.Lock()
	defer d.drain.mu.Unlock()
	d.ready.Store(d.drain.over == nil)
}
