// Package ratelimit is the route policy of ingress-nginx's limit-rps,
// limit-rpm, limit-connections and limit-rate: per client address, a
// request rate with a burst (nginx's limit_req with burst and nodelay), a
// bound on the requests in flight (limit_conn), and, per answer, a bound on
// the bandwidth after its first bytes (limit_rate_after, limit_rate).
//
// The client is exchange.Request.ClientIP, the address the data plane
// settled on: the peer's, or the right-most untrusted X-Forwarded-For entry
// behind a trusted proxy. Clients of the allow list are not counted.
//
// # Rates
//
// A rate of r requests per second with a burst of b is GCRA, which is
// nginx's leaky bucket with nodelay: a client whose bucket is empty may
// make b+1 requests at once, then one every 1/r seconds; a request that
// would overflow the bucket is refused and changes nothing. With a rate
// per second and one per minute, a request must pass both, and one the
// second refuses is taken back from the first (nginx counts it in
// neither).
//
// # Memory and eviction
//
// Each limit of a zone is a fixed table of 8-byte words (Store,
// server.limits.rate_limit_zone_clients of them), grouped in buckets of
// eight that fill one cache line. A word holds a 22-bit tag of its client's
// keyed hash and the client's state: the time its bucket will be empty, or
// its requests in flight. So the memory of a zone does not grow with the
// number of clients. A new client takes an empty word of its bucket, else,
// for rates, the word whose bucket is emptiest (the client that would be
// let through soonest anyway, for equal use the least recently limited;
// one whose bucket is empty loses nothing). For requests in flight, a word
// is taken only while it counts none; a new client whose eight words all
// count requests in flight is refused, as nginx refuses when its zone is
// full. Two clients with the same bucket and tag (about one in 500,000 for
// a client whose bucket is full) share their counts.
//
// # No locks
//
// A request reads the words of its bucket and changes its own with one
// compare-and-swap, retried only when another request changed a word of
// the bucket meanwhile: no lock, no allocation, and requests of different
// clients touch different cache lines. The hash's key is random per
// table, so which clients share a bucket cannot be chosen from outside.
package ratelimit

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/policies/sourcerange"
)

// Handler applies one route's rate limit and passes the requests it admits
// to the next handler.
type Handler struct {
	next  exchange.Handler
	epoch time.Time

	perSecond, perMinute *requests
	secondBurst          uint64
	minuteBurst          uint64
	inFlight             *conns
	maxInFlight          uint64
	allow                *sourcerange.Set

	status int
	body   []byte

	rate, after int64
	writers     sync.Pool
}

// New returns the Handler of cfg, whose tables come from u (one Use per
// configuration load); clients is the size of each table (0 for
// config.DefaultRateLimitZoneClients). It is called once per load.
func New(cfg *config.RateLimit, clients int, u *Use, next exchange.Handler) (*Handler, error) {
	if next == nil {
		return nil, fmt.Errorf("next handler is nil")
	}
	if clients <= 0 {
		clients = config.DefaultRateLimitZoneClients
	}
	h := &Handler{next: next, epoch: u.store.epoch, status: cfg.StatusOr503(), rate: int64(cfg.Rate), after: int64(cfg.RateAfter)}
	h.body = []byte(http.StatusText(h.status) + "\n")
	if cfg.Counts() {
		if cfg.Zone == "" {
			return nil, fmt.Errorf("zone: is required with rps, rpm or connections")
		}
		if cfg.RPS > 0 {
			h.perSecond = u.requests(cfg.Zone, int64(time.Second)/int64(cfg.RPS), clients)
			h.secondBurst = uint64(cfg.RPSBurst)
		}
		if cfg.RPM > 0 {
			h.perMinute = u.requests(cfg.Zone, int64(time.Minute)/int64(cfg.RPM), clients)
			h.minuteBurst = uint64(cfg.RPMBurst)
		}
		if cfg.Connections > 0 {
			h.inFlight = u.conns(cfg.Zone, clients)
			h.maxInFlight = uint64(cfg.Connections)
		}
		if len(cfg.Allowlist) > 0 {
			set, err := sourcerange.NewSet(cfg.Allowlist)
			if err != nil {
				return nil, fmt.Errorf("allowlist: %w", err)
			}
			h.allow = set
		}
	}
	h.writers.New = func() any { return &throttled{} }
	return h, nil
}

// Serve refuses the request with the policy's status when its client is
// over a limit, and otherwise serves it, its answer throttled when a rate
// is set.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if (h.perSecond != nil || h.perMinute != nil || h.inFlight != nil) && !h.allow.Contains(x.ClientIP) {
		if !h.admit(x.ClientIP) {
			h.refuse(w, x.HTTP)
			return
		}
		if h.inFlight != nil {
			b, tag := h.inFlight.place(x.ClientIP)
			word := h.inFlight.acquire(b, tag, h.maxInFlight)
			if word == nil {
				h.refuse(w, x.HTTP)
				return
			}
			defer release(word)
		}
	}
	if h.rate <= 0 {
		h.next.Serve(w, x)
		return
	}
	t := h.writers.Get().(*throttled)
	t.start(w, x.HTTP, h.rate, h.after)
	h.next.Serve(t, x)
	t.stop()
	h.writers.Put(t)
}

// admit counts the request in the rates, and reports whether both let it
// through. The rate per second comes first, as in ingress-nginx's
// configuration.
func (h *Handler) admit(client netip.Addr) bool {
	if h.perSecond == nil && h.perMinute == nil {
		return true
	}
	now := int64(time.Since(h.epoch))
	var sb *bucket
	var stag uint64
	if h.perSecond != nil {
		sb, stag = h.perSecond.place(client)
		if !h.perSecond.take(sb, stag, h.perSecond.units(now), h.secondBurst) {
			return false
		}
	}
	if h.perMinute != nil {
		b, tag := h.perMinute.place(client)
		if !h.perMinute.take(b, tag, h.perMinute.units(now), h.minuteBurst) {
			if sb != nil {
				h.perSecond.give(sb, stag)
			}
			return false
		}
	}
	return true
}

// refuse answers a request over a limit, without a body for HEAD.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(h.status)
	if r == nil || r.Method != http.MethodHead {
		w.Write(h.body)
	}
}
