package daemon

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/listener"
	"github.com/ramjet-dev/ramjet/dataplane/metrics"
	"github.com/ramjet-dev/ramjet/dataplane/router"
	"github.com/ramjet-dev/ramjet/dataplane/splice"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// passthrough is an application's passthrough, compiled: the pool its TLS
// connections are spliced to.
type passthrough struct {
	pool     *upstream.Pool
	idle     time.Duration
	counters *metrics.Passthrough
}

// compilePassthrough compiles an application's passthrough; the
// configuration's validation checked that its pool exists.
func (c *compiler) compilePassthrough(tname, aname string, cfg *config.Passthrough) *passthrough {
	return &passthrough{
		pool:     c.pools[cfg.Pool],
		idle:     cfg.IdleTimeout.Or(config.DefaultPassthroughIdleTimeout),
		counters: c.d.metrics.PassthroughCounters(tname, aname),
	}
}

// passthroughListeners are the TLS listeners on which an application of
// cfg has a passthrough: only their connections are peeked.
func passthroughListeners(cfg *config.Config) map[string]bool {
	on := map[string]bool{}
	for _, t := range cfg.Tenants {
		for _, app := range t.Applications {
			if app == nil || app.Passthrough == nil {
				continue
			}
			for name, ln := range cfg.Server.Listeners {
				if ln != nil && ln.TLS != nil && servedOn(app.Listeners, name) {
					on[name] = true
				}
			}
		}
	}
	return on
}

// passthroughHook is a TLS listener's listener.Passthrough: it reads the
// serving generation at each connection, so a reload changes which hosts
// are spliced for the connections that come after it.
type passthroughHook struct {
	d        *Daemon
	listener string
}

func (h passthroughHook) Active() bool {
	return h.d.current.Load().passthrough[h.listener]
}

func (h passthroughHook) Splice(serverName string, conn net.Conn) bool {
	rt, _, err := h.d.current.Load().tables.of(h.listener).Lookup(router.NormalizeHost(serverName), "/", nil)
	if err != nil || rt == nil || rt.app == nil || rt.app.passthrough == nil {
		return false
	}
	untrack := h.d.conns.Track(conn)
	go func() {
		defer untrack()
		h.d.splice(rt.app.passthrough, conn)
	}()
	return true
}

// splice connects to a member of the passthrough's pool (trying others
// after a failed connect, as many as the pool's retries allow) and streams
// the connection to it, the ClientHello first.
func (d *Daemon) splice(pt *passthrough, conn net.Conn) {
	// The handshake's deadline bounded the ClientHello; the idle timeout
	// takes over once connected.
	conn.SetDeadline(time.Time{})
	member, m := d.connectMember(pt.pool, conn.RemoteAddr())
	if member == nil {
		pt.counters.Failed.Inc()
		conn.Close()
		return
	}
	defer m.Stats.InFlight.Add(-1)
	pt.counters.Spliced.Inc()
	client := conn
	if r, ok := conn.(*listener.ReplayConn); ok {
		// The ClientHello goes first; then the socket itself is read,
		// without the replaying wrapper in the way.
		if head := r.Buffered(); len(head) > 0 {
			if _, err := member.Write(head); err != nil {
				member.Close()
				conn.Close()
				return
			}
			pt.counters.In.Add(float64(len(head)))
		}
		client = r.Conn
	}
	splice.Pipe(client, member, splice.Options{Idle: pt.idle, In: pt.counters.In, Out: pt.counters.Out})
}

// connectMember dials a member of pool picked by its balancer, hashing
// the client's address for hash pools; after a failed connect another
// member is tried, up to the pool's retries. The member's in-flight count
// is raised for the connection's life.
func (d *Daemon) connectMember(pool *upstream.Pool, client net.Addr) (net.Conn, *balancer.Member) {
	set := pool.Members()
	var key uint64
	if ap, err := netip.ParseAddrPort(client.String()); err == nil {
		ip := ap.Addr().Unmap().As16()
		key = balancer.HashBytes(ip[:])
	}
	var tried []int
	for try := 0; try <= pool.Retries; try++ {
		i := pool.Algorithm.Pick(set, key, tried)
		if i < 0 {
			return nil, nil
		}
		tried = append(tried, i)
		m := set.Member(i)
		m.Stats.InFlight.Add(1)
		m.Stats.Requests.Add(1)
		c, err := pool.Dial(context.Background(), m.Address)
		if err == nil {
			return c, m
		}
		m.Stats.Failures.Add(1)
		m.Stats.InFlight.Add(-1)
		d.log.Debug("passthrough connect failed", "pool", pool.Name, "member", m.Address, "error", err)
		if try < pool.Retries {
			pool.Stats.Retries.Add(1)
		}
	}
	return nil, nil
}
