package extauth

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) get() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// cachedHandler is a policy with a cache on a service answering code, and
// the cache's clock.
func cachedHandler(t *testing.T, code int, cache *config.AuthCache) (*Handler, *authService, *clock) {
	t.Helper()
	svc := startAuth(t, handle(status(code)))
	h, _, _ := newHandler(t, &config.ExternalAuth{URL: svc.URL, Cache: cache})
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	h.cache.now = c.get
	return h, svc, c
}

func TestCacheOutcomes(t *testing.T) {
	type step struct {
		token   string        // the Authorization header
		advance time.Duration // before the request
	}
	tests := []struct {
		name      string
		code      int
		cache     config.AuthCache
		steps     []step
		wantCalls int64
	}{
		{name: "2xx hit", code: 200, steps: []step{{token: "a"}, {token: "a"}, {token: "a"}}, wantCalls: 1},
		{name: "another key misses", code: 200, steps: []step{{token: "a"}, {token: "b"}, {token: "a"}}, wantCalls: 2},
		{name: "2xx expires after 5m by default", code: 200, steps: []step{{token: "a"}, {token: "a", advance: 4 * time.Minute}, {token: "a", advance: time.Minute}}, wantCalls: 2},
		{name: "401 is cached by default", code: 401, steps: []step{{token: "a"}, {token: "a"}}, wantCalls: 1},
		{name: "403 is not cached by default", code: 403, steps: []step{{token: "a"}, {token: "a"}}, wantCalls: 2},
		{name: "403 cached when asked", code: 403, cache: config.AuthCache{Forbidden: config.Duration(time.Minute)}, steps: []step{{token: "a"}, {token: "a"}}, wantCalls: 1},
		{name: "an error is never cached", code: 500, cache: config.AuthCache{Allowed: config.Duration(time.Hour)}, steps: []step{{token: "a"}, {token: "a"}}, wantCalls: 2},
		{name: "own durations", code: 200, cache: config.AuthCache{Allowed: config.Duration(10 * time.Second)}, steps: []step{{token: "a"}, {token: "a", advance: 10 * time.Second}}, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := tt.cache
			cache.Key = []string{"header:authorization", "host"}
			h, svc, clk := cachedHandler(t, tt.code, &cache)
			for _, s := range tt.steps {
				clk.advance(s.advance)
				serve(h, newExchange(http.MethodGet, "/", http.Header{"Authorization": {s.token}}))
			}
			if got := svc.calls.Load(); got != tt.wantCalls {
				t.Errorf("service calls = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestCacheKeyParts(t *testing.T) {
	tests := []struct {
		name       string
		key        []string
		a, b       func(x *http.Header) string // the targets of two requests and their headers
		wantShared bool
	}{
		{name: "cookie differs", key: []string{"cookie:session"}, a: cookie("session=1"), b: cookie("session=2")},
		{name: "cookie same", key: []string{"cookie:session"}, a: cookie("x=1; session=1"), b: cookie("session=1"), wantShared: true},
		{name: "cookie absent and empty differ", key: []string{"cookie:session"}, a: cookie("other=1"), b: cookie("session=")},
		{name: "uri differs", key: []string{"uri"}, a: target("/a?x=1"), b: target("/a?x=2")},
		{name: "path ignores the query", key: []string{"path"}, a: target("/a?x=1"), b: target("/a?x=2"), wantShared: true},
		{name: "header values are split unambiguously", key: []string{"header:X-A", "header:X-B"}, a: headers("X-A", "ab", "X-B", "c"), b: headers("X-A", "a", "X-B", "bc")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, svc, _ := cachedHandler(t, 200, &config.AuthCache{Key: tt.key})
			for _, req := range []func(*http.Header) string{tt.a, tt.b} {
				hd := http.Header{}
				uri := req(&hd)
				serve(h, newExchange(http.MethodGet, uri, hd))
			}
			want := int64(2)
			if tt.wantShared {
				want = 1
			}
			if got := svc.calls.Load(); got != want {
				t.Errorf("service calls = %d, want %d", got, want)
			}
		})
	}
}

func cookie(line string) func(*http.Header) string {
	return func(h *http.Header) string { h.Set("Cookie", line); return "/" }
}

func target(uri string) func(*http.Header) string {
	return func(*http.Header) string { return uri }
}

func headers(pairs ...string) func(*http.Header) string {
	return func(h *http.Header) string {
		for i := 0; i < len(pairs); i += 2 {
			h.Add(pairs[i], pairs[i+1])
		}
		return "/"
	}
}

func TestCacheBound(t *testing.T) {
	const entries = 128
	h, svc, clk := cachedHandler(t, 200, &config.AuthCache{Key: []string{"header:Authorization"}, MaxEntries: entries})
	const keys = 16 * entries // enough to fill every shard
	for i := range keys {
		serve(h, newExchange(http.MethodGet, "/", http.Header{"Authorization": {strconv.Itoa(i)}}))
		if n := h.cache.Len(); n > entries {
			t.Fatalf("after %d keys the cache holds %d entries, want at most %d", i+1, n, entries)
		}
	}
	if got := svc.calls.Load(); got != keys {
		t.Fatalf("service calls = %d, want %d", got, keys)
	}
	// Once every entry has expired, the full shard of a new key drops its
	// expired entries (entries/cacheShards of them) before taking it.
	clk.advance(time.Hour)
	serve(h, newExchange(http.MethodGet, "/", http.Header{"Authorization": {"new"}}))
	if got, want := h.cache.Len(), entries-entries/cacheShards+1; got != want {
		t.Errorf("cache holds %d entries, want %d", got, want)
	}
}

// TestCacheConcurrent runs requests of a few keys at once (under -race, the
// test of the cache's locking): every answer is the service's, and the
// service is asked at most once per key and racing request.
func TestCacheConcurrent(t *testing.T) {
	const workers, perWorker, keys = 8, 50, 4
	h, svc, _ := cachedHandler(t, 200, &config.AuthCache{Key: []string{"header:Authorization"}})
	var wg sync.WaitGroup
	codes := make(chan int, workers*perWorker)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				token := strconv.Itoa((w + i) % keys)
				codes <- serve(h, newExchange(http.MethodGet, "/", http.Header{"Authorization": {token}})).Code
			}
		})
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != 200 {
			t.Fatalf("status = %d, want 200", code)
		}
	}
	if got := svc.calls.Load(); got < keys || got > keys*workers {
		t.Errorf("service calls = %d, want %d..%d", got, keys, keys*workers)
	}
}

func TestCounters(t *testing.T) {
	svc := startAuth(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "good":
		case "forbidden":
			w.WriteHeader(http.StatusForbidden)
		case "broken":
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	var counters [2][4]prometheus.Counter
	for i := range counters {
		for j := range counters[i] {
			counters[i][j] = prometheus.NewCounter(prometheus.CounterOpts{Name: "c"})
		}
	}
	m := &member{}
	h, err := New(&config.ExternalAuth{URL: svc.URL, Cache: &config.AuthCache{Key: []string{"header:Authorization"}}},
		Options{AllowLoopback: true, Counters: &counters, Log: newLogger(io.Discard)}, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{"good", "good", "none", "none", "forbidden", "forbidden", "broken"} {
		serve(h, newExchange(http.MethodGet, "/", http.Header{"Authorization": {token}}))
	}
	// 403 is not cached by default, nor is a failure.
	want := [2][4]float64{{1, 1, 2, 1}, {1, 1, 0, 0}}
	var got [2][4]float64
	for i := range counters {
		for j := range counters[i] {
			got[i][j] = testutil.ToFloat64(counters[i][j])
		}
	}
	if got != want {
		t.Errorf("counters [service, cache][allowed, unauthorized, forbidden, failed] = %v, want %v", got, want)
	}
}
