package main

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/ingress"
)

// globalRateLimitFlags are ingress-nginx's global-rate-limit-* ConfigMap
// keys as flags: the memcached of the global-rate-limit annotations and the
// status of their refusals.
type globalRateLimitFlags struct {
	host     string
	port     int
	timeout  time.Duration
	poolSize int
	status   int
}

func (g *globalRateLimitFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.host, "global-rate-limit-memcached-host", "", "memcached host (name or IP) where the global-rate-limit annotations count, shared by every replica (ingress-nginx's global-rate-limit-memcached-host); empty: the annotations are not served (a finding says so)")
	fs.IntVar(&g.port, "global-rate-limit-memcached-port", 11211, "memcached port (global-rate-limit-memcached-port)")
	fs.DurationVar(&g.timeout, "global-rate-limit-memcached-connect-timeout", config.DefaultMemcachedTimeout, "bound of connecting to memcached and of each read and write (global-rate-limit-memcached-connect-timeout), up to 5s; a request that memcached cannot count passes")
	fs.IntVar(&g.poolSize, "global-rate-limit-memcached-pool-size", config.DefaultMemcachedPoolSize, "idle connections to memcached each ramjetd keeps (global-rate-limit-memcached-pool-size), 1..10000")
	fs.IntVar(&g.status, "global-rate-limit-status-code", ingress.DefaultGlobalRateLimitStatus, "status of the requests the global-rate-limit annotations refuse, 400..599 (ingress-nginx's global-rate-limit-status-code)")
}

// apply checks the flags and, with a host, sets base's memcached (which
// the flags replace when --base has one).
func (g *globalRateLimitFlags) apply(base *config.Server) error {
	if g.status < 400 || g.status > 599 {
		return fmt.Errorf("--global-rate-limit-status-code: must be 400..599, not %d", g.status)
	}
	if g.host == "" {
		return nil
	}
	if g.timeout <= 0 || g.poolSize < 1 {
		return fmt.Errorf("--global-rate-limit-memcached-connect-timeout and --global-rate-limit-memcached-pool-size must be more than 0")
	}
	m := &config.Memcached{
		Addresses: []string{net.JoinHostPort(g.host, strconv.Itoa(g.port))},
		Timeout:   config.Duration(g.timeout),
		PoolSize:  g.poolSize,
	}
	if err := m.Check(); err != nil {
		return fmt.Errorf("--global-rate-limit-memcached-*: %w", err)
	}
	base.Memcached = m
	return nil
}
