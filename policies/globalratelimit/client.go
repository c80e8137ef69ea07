package globalratelimit

import (
	"errors"
	"hash/crc32"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Outcomes of a counted request, the index of Options.Counters.
const (
	// Passed: counted, under the limit.
	Passed = iota
	// Refused: over the limit, decided with memcached's counts.
	Refused
	// RefusedCached: over the limit, decided by a remembered refusal.
	RefusedCached
	// FailedOpen: memcached could not be used; the request passed.
	FailedOpen
)

// Outcomes are the label values of the outcomes, in index order.
var Outcomes = [4]string{"passed", "refused", "refused_cached", "failed_open"}

// LogEvery is the least time between two log lines about failures.
const LogEvery = 10 * time.Second

// Store holds the counters. Client's is memcached; tests use others.
type Store interface {
	// Counts returns the values of the counters a and b, 0 for a missing
	// one.
	Counts(a, b string) (uint64, uint64, error)
	// Incr adds one to the counter key, created with 1 and an expiry in
	// seconds when it is missing, and returns its new value.
	Incr(key string, expiry int32) (uint64, error)
}

// Options are what a Client reports to.
type Options struct {
	// Log receives the rate-limited lines about failures; nil logs nothing.
	Log *slog.Logger
	// Counters count the requests by outcome (indexed like Outcomes); nil
	// counts nothing.
	Counters *[4]prometheus.Counter
}

// Client is the state the global rate limits of one ramjetd share: the
// memcached connections, the remembered refusals and the failure log's
// pace. It is safe for concurrent use and lives as long as
// server.memcached does not change.
type Client struct {
	store     Store
	mc        *memcache.Client
	settings  string
	opts      Options
	decisions decisions

	lastLog    atomic.Int64 // unix nanoseconds
	suppressed atomic.Int64
}

// NewClient returns a Client of the memcached servers of cfg.
func NewClient(cfg *config.Memcached, opts Options) *Client {
	timeout := cfg.Timeout.Or(config.DefaultMemcachedTimeout)
	pool := cfg.PoolSize
	if pool == 0 {
		pool = config.DefaultMemcachedPoolSize
	}
	sel := make(servers, len(cfg.Addresses))
	for i, a := range cfg.Addresses {
		sel[i] = hostAddr(a)
	}
	mc := memcache.NewFromSelector(sel)
	mc.Timeout = timeout
	mc.MaxIdleConns = pool
	c := NewClientStore(&memcachedStore{mc: mc}, opts)
	c.mc = mc
	c.settings = Settings(cfg)
	return c
}

// NewClientStore returns a Client counting in store.
func NewClientStore(store Store, opts Options) *Client {
	return &Client{store: store, opts: opts}
}

// Settings identifies cfg: a reload whose server.memcached has the same
// settings keeps the Client.
func Settings(cfg *config.Memcached) string {
	return strings.Join(cfg.Addresses, ",") + "|" + cfg.Timeout.Or(config.DefaultMemcachedTimeout).String() + "|" + strconv.Itoa(cfg.PoolSize)
}

// Same reports whether c serves cfg.
func (c *Client) Same(cfg *config.Memcached) bool {
	return c != nil && cfg != nil && c.settings == Settings(cfg)
}

// Close closes the idle connections.
func (c *Client) Close() {
	if c != nil && c.mc != nil {
		c.mc.Close()
	}
}

func (c *Client) count(outcome int) {
	if c.opts.Counters != nil {
		c.opts.Counters[outcome].Inc()
	}
}

// failed counts a request that passed uncounted, and logs it when the last
// line is LogEvery old.
func (c *Client) failed(err error) {
	c.count(FailedOpen)
	if c.opts.Log == nil {
		return
	}
	now := time.Now().UnixNano()
	last := c.lastLog.Load()
	if now-last < int64(LogEvery) || !c.lastLog.CompareAndSwap(last, now) {
		c.suppressed.Add(1)
		return
	}
	c.opts.Log.Warn("global rate limit: memcached failed, requests pass uncounted (fail open)",
		"error", err, "other_failures_since_last_line", c.suppressed.Swap(0))
}

// memcachedStore is Store on gomemcache.
type memcachedStore struct{ mc *memcache.Client }

func (s *memcachedStore) Counts(a, b string) (uint64, uint64, error) {
	items, err := s.mc.GetMulti([]string{a, b})
	if err != nil {
		return 0, 0, err
	}
	va, err := itemCount(items[a])
	if err != nil {
		return 0, 0, err
	}
	vb, err := itemCount(items[b])
	return va, vb, err
}

func itemCount(it *memcache.Item) (uint64, error) {
	if it == nil {
		return 0, nil
	}
	return strconv.ParseUint(strings.TrimSpace(string(it.Value)), 10, 64)
}

// Incr is lua-resty-global-throttle's: incr, add when missing, incr again
// when another replica added it meanwhile.
func (s *memcachedStore) Incr(key string, expiry int32) (uint64, error) {
	n, err := s.mc.Increment(key, 1)
	if !errors.Is(err, memcache.ErrCacheMiss) {
		return n, err
	}
	err = s.mc.Add(&memcache.Item{Key: key, Value: []byte("1"), Expiration: expiry})
	if err == nil {
		return 1, nil
	}
	if errors.Is(err, memcache.ErrNotStored) {
		return s.mc.Increment(key, 1)
	}
	return 0, err
}

// hostAddr is a memcached server's host:port, resolved at each dial.
type hostAddr string

func (a hostAddr) Network() string { return "tcp" }
func (a hostAddr) String() string  { return string(a) }

// servers picks a key's server by its CRC-32, as gomemcache's ServerList.
type servers []hostAddr

func (s servers) PickServer(key string) (net.Addr, error) {
	switch len(s) {
	case 0:
		return nil, memcache.ErrNoServers
	case 1:
		return s[0], nil
	}
	return s[crc32.ChecksumIEEE([]byte(key))%uint32(len(s))], nil
}

func (s servers) Each(f func(net.Addr) error) error {
	for _, a := range s {
		if err := f(a); err != nil {
			return err
		}
	}
	return nil
}

// maxDecisions bounds the remembered refusals.
const maxDecisions = 65536

// decisions are the remembered refusals: counter prefix to the time the
// key goes under its limit. Reads take no lock (sync.Map); a full table
// is swept of expired entries at most once a second, and remembers nothing
// more while it stays full.
type decisions struct {
	m     sync.Map // string → int64 unix nanoseconds
	size  atomic.Int64
	swept atomic.Int64
}

func (d *decisions) refused(prefix string, now time.Time) bool {
	v, ok := d.m.Load(prefix)
	if !ok {
		return false
	}
	if now.UnixNano() < v.(int64) {
		return true
	}
	if d.m.CompareAndDelete(prefix, v) {
		d.size.Add(-1)
	}
	return false
}

func (d *decisions) remember(prefix string, until, now time.Time) {
	if d.size.Load() >= maxDecisions && !d.sweep(now) {
		return
	}
	if _, loaded := d.m.LoadOrStore(prefix, until.UnixNano()); !loaded {
		d.size.Add(1)
	}
}

// sweep drops the expired refusals, and reports whether there is room.
func (d *decisions) sweep(now time.Time) bool {
	last := d.swept.Load()
	if now.UnixNano()-last < int64(time.Second) || !d.swept.CompareAndSwap(last, now.UnixNano()) {
		return false
	}
	d.m.Range(func(k, v any) bool {
		if v.(int64) <= now.UnixNano() && d.m.CompareAndDelete(k, v) {
			d.size.Add(-1)
		}
		return true
	})
	return d.size.Load() < maxDecisions
}
