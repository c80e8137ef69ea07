// Package globalratelimit is the route policy of ingress-nginx's
// global-rate-limit: each key (by default the client address) may make
// Limit requests per window, counted in memcached so that every replica
// shares the counts.
//
// # Algorithm
//
// It is lua-resty-global-throttle's approximate sliding window, which
// ingress-nginx uses. Time is cut in windows of the policy's length; the
// counter of a key in window n is the memcached key
// "<namespace>.<key>.<n>.counter" (every byte but letters, digits and
// "-._~" percent-escaped, as lua-resty-memcached escapes the keys of
// ingress-nginx), a decimal text that expires after two windows. A request
// reads the counters of the current and previous windows (one GetMulti):
// when the current count has reached the limit, or the estimate
// count + rate × remaining (the rate extrapolated from both windows)
// reaches it, the request is refused without being counted; otherwise it
// is counted (incr, or add on the first request of the window) and passes
// unless the new count, without itself, has reached the limit (other
// replicas counted meanwhile).
//
// # Cached refusals
//
// A refusal is remembered in this process for as long as the algorithm
// says the key stays over its limit (ingress-nginx's global_throttle_cache),
// so a client over its limit costs no memcached operation until then.
//
// # Failures
//
// A request whose counts cannot be read or written (memcached down, slow
// beyond server.memcached.timeout, an error) passes: the policy fails open,
// as ingress-nginx does. Each such request counts in the failed_open
// outcome, and a log line says so at most every LogEvery.
package globalratelimit

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/policies/sourcerange"
)

// Handler applies one route's global rate limit and passes the requests it
// admits to the next handler.
type Handler struct {
	next      exchange.Handler
	client    *Client
	namespace string
	limit     float64
	window    float64 // seconds
	expiry    int32   // seconds
	key       key
	ignored   *sourcerange.Set
	status    int
	body      []byte
	now       func() time.Time
}

// New returns the Handler of cfg, counting in client. It is called once
// per configuration load.
func New(cfg *config.GlobalRateLimit, client *Client, next exchange.Handler) (*Handler, error) {
	switch {
	case next == nil:
		return nil, fmt.Errorf("next handler is nil")
	case client == nil:
		return nil, fmt.Errorf("needs server.memcached, where its counts are kept")
	case cfg.Limit == 0 || cfg.Window.Std() < time.Second:
		return nil, fmt.Errorf("limit and window (1s or more) are required")
	}
	seconds := cfg.Window.Std() / time.Second
	h := &Handler{
		next: next, client: client, namespace: escape(cfg.Namespace),
		limit: float64(cfg.Limit), window: float64(seconds), expiry: int32(2 * seconds),
		key: key(cfg.Key), status: cfg.StatusOr429(), now: time.Now,
	}
	h.body = []byte(http.StatusText(h.status) + "\n")
	if len(cfg.IgnoredRanges) > 0 {
		set, err := sourcerange.NewSet(cfg.IgnoredRanges)
		if err != nil {
			return nil, fmt.Errorf("ignored_ranges: %w", err)
		}
		h.ignored = set
	}
	return h, nil
}

// Serve refuses the request with the policy's status when its key is over
// the limit, and otherwise serves it.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if h.ignored.Contains(x.ClientIP) {
		h.next.Serve(w, x)
		return
	}
	prefix := counterPrefix(h.namespace, h.key.value(x))
	now := h.now()
	if h.client.decisions.refused(prefix, now) {
		h.client.count(RefusedCached)
		h.refuse(w, x.HTTP)
		return
	}
	refuse, delay, err := h.decide(prefix, now)
	switch {
	case err != nil:
		h.client.failed(err)
		h.next.Serve(w, x)
	case refuse:
		h.client.count(Refused)
		if delay > 0.001 {
			h.client.decisions.remember(prefix, now.Add(time.Duration(delay*float64(time.Second))), now)
		}
		h.refuse(w, x.HTTP)
	default:
		h.client.count(Passed)
		h.next.Serve(w, x)
	}
}

// decide runs the sliding window for the counters under prefix: whether
// to refuse, and for how many seconds the key stays over the limit.
func (h *Handler) decide(prefix string, t time.Time) (bool, float64, error) {
	now := float64(t.UnixNano()) / 1e9
	id := int64(math.Floor(now / h.window))
	remaining := h.window - math.Mod(now, h.window)
	cur, prev := counterKey(prefix, id), counterKey(prefix, id-1)
	count, last, err := h.client.store.Counts(cur, prev)
	if err != nil {
		return false, 0, err
	}
	c := float64(count)
	if c >= h.limit {
		return true, remaining, nil
	}
	lastRate := float64(last) / h.window
	rate := (lastRate*remaining + c) / h.window
	if estimate := rate*remaining + c; estimate >= h.limit {
		return true, h.delay(remaining, rate, c), nil
	}
	n, err := h.client.store.Incr(cur, h.expiry)
	if err != nil {
		return false, 0, err
	}
	if float64(n)-1 >= h.limit {
		// other replicas counted the key meanwhile.
		after := float64(h.now().UnixNano()) / 1e9
		return true, h.window - math.Mod(after, h.window), nil
	}
	return false, 0, nil
}

// delay is how long a key whose estimate reached the limit stays over it,
// as lua-resty-global-throttle computes it; 0 when it should not be
// remembered.
func (h *Handler) delay(remaining, rate, count float64) float64 {
	if rate == 0 {
		return remaining
	}
	d := remaining - (h.limit-count)/rate
	switch {
	case d > remaining:
		return remaining
	case d <= 0 || d > h.window:
		return 0
	}
	return d
}

func (h *Handler) refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(h.status)
	if r == nil || r.Method != http.MethodHead {
		w.Write(h.body)
	}
}
