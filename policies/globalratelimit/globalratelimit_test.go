package globalratelimit

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// mapStore is a Store in memory that counts its operations.
type mapStore struct {
	mu     sync.Mutex
	counts map[string]uint64
	ops    int
	err    error
	// raced is added to every Incr's result: other replicas counting.
	raced uint64
}

func newMapStore() *mapStore { return &mapStore{counts: map[string]uint64{}} }

func (s *mapStore) Counts(a, b string) (uint64, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops++
	if s.err != nil {
		return 0, 0, s.err
	}
	return s.counts[a], s.counts[b], nil
}

func (s *mapStore) Incr(key string, expiry int32) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops++
	if s.err != nil {
		return 0, s.err
	}
	s.counts[key] += 1 + s.raced
	return s.counts[key], nil
}

func counters() *[4]prometheus.Counter {
	var c [4]prometheus.Counter
	for i := range c {
		c[i] = prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
	}
	return &c
}

var ok = exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { w.WriteHeader(http.StatusNoContent) })

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// window 10 s starting at a multiple of 10 s.
var start = time.Unix(1_700_000_000, 0)

func newHandler(t *testing.T, cfg config.GlobalRateLimit, store Store, opts Options) (*Handler, *clock) {
	t.Helper()
	if cfg.Namespace == "" {
		cfg.Namespace = "uid1"
	}
	h, err := New(&cfg, NewClientStore(store, opts), ok)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: start}
	h.now = c.now
	return h, c
}

func serve(h *Handler, client string, header http.Header) int {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.Serve(w, &exchange.Request{HTTP: r, ClientIP: netip.MustParseAddr(client)})
	return w.Code
}

func TestSlidingWindow(t *testing.T) {
	store := newMapStore()
	cs := counters()
	h, clk := newHandler(t, config.GlobalRateLimit{Limit: 3, Window: config.Duration(10 * time.Second)}, store, Options{Counters: cs})
	// lua-resty-global-throttle's estimate: the rate is the previous
	// window's count over the part of it still in the sliding window, plus
	// the current count, over a window; the estimate is the current count
	// plus that rate for the time left.
	steps := []struct {
		at     time.Duration
		client string
		want   int
	}{
		{0, "10.0.0.1", 204},               // estimate 0
		{1 * time.Second, "10.0.0.1", 204}, // 1 + 0.1 × 9 = 1.9
		{2 * time.Second, "10.0.0.1", 429}, // 2 + 0.2 × 8 = 3.6: refused for 8 - 1/0.2 = 3 s
		{3 * time.Second, "10.0.0.2", 204}, // another key
		{4 * time.Second, "10.0.0.1", 429}, // remembered
		{6 * time.Second, "10.0.0.1", 204}, // 2 + 0.2 × 4 = 2.8
		{7 * time.Second, "10.0.0.1", 429}, // the count is 3
		// next window, at its start: the previous window's 3 extrapolate to 3.
		{10 * time.Second, "10.0.0.1", 429},
		{15 * time.Second, "10.0.0.1", 204}, // 0 + 0.15 × 5 = 0.75
		{16 * time.Second, "10.0.0.1", 204}, // 1 + 0.22 × 4 = 1.88
		{17 * time.Second, "10.0.0.1", 204}, // 2 + 0.29 × 3 = 2.87
		{18 * time.Second, "10.0.0.1", 429}, // the count is 3
		// two windows later nothing is left.
		{30 * time.Second, "10.0.0.1", 204},
	}
	for i, s := range steps {
		clk.t = start.Add(s.at)
		if got := serve(h, s.client, nil); got != s.want {
			t.Errorf("step %d (%s, %s): %d, want %d", i, s.at, s.client, got, s.want)
		}
	}
	id := start.Unix() / 10
	for w, want := range []uint64{3, 3} {
		key := "uid1.10.0.0.1." + strconv.FormatInt(id+int64(w), 10) + ".counter"
		if got := store.counts[key]; got != want {
			t.Errorf("%s: %d, want %d (refused requests are not counted)", key, got, want)
		}
	}
	if p, r, c := testutil.ToFloat64(cs[Passed]), testutil.ToFloat64(cs[Refused]), testutil.ToFloat64(cs[RefusedCached]); p != 8 || r != 4 || c != 1 {
		t.Errorf("passed %v refused %v cached %v, want 8, 4 and 1", p, r, c)
	}
}

// TestCachedRefusal: a refused key is refused without memcached until the
// algorithm's delay ends.
func TestCachedRefusal(t *testing.T) {
	store := newMapStore()
	cs := counters()
	h, clk := newHandler(t, config.GlobalRateLimit{Limit: 1, Window: config.Duration(10 * time.Second)}, store, Options{Counters: cs})
	serve(h, "10.0.0.1", nil)
	if got := serve(h, "10.0.0.1", nil); got != 429 {
		t.Fatalf("second request %d, want 429", got)
	}
	ops := store.ops
	clk.t = start.Add(5 * time.Second)
	if got := serve(h, "10.0.0.1", nil); got != 429 {
		t.Fatalf("cached: %d, want 429", got)
	}
	if store.ops != ops || testutil.ToFloat64(cs[RefusedCached]) != 1 {
		t.Errorf("memcached operations %d → %d, cached refusals %v; want none and 1", ops, store.ops, testutil.ToFloat64(cs[RefusedCached]))
	}
	clk.t = start.Add(20 * time.Second)
	if got := serve(h, "10.0.0.1", nil); got != 204 {
		t.Errorf("after the window: %d, want 204", got)
	}
}

func TestRacedIncrement(t *testing.T) {
	store := newMapStore()
	store.raced = 5 // other replicas counted 5 meanwhile
	h, _ := newHandler(t, config.GlobalRateLimit{Limit: 3, Window: config.Duration(time.Minute)}, store, Options{})
	if got := serve(h, "10.0.0.1", nil); got != 429 {
		t.Errorf("%d, want 429: the count without this request is over the limit", got)
	}
}

// TestFailOpen: memcached errors let requests through, counted as
// failed_open, with one log line per LogEvery.
func TestFailOpen(t *testing.T) {
	store := newMapStore()
	store.err = errors.New("dial tcp 127.0.0.1:1: connection refused")
	var buf bytes.Buffer
	cs := counters()
	h, _ := newHandler(t, config.GlobalRateLimit{Limit: 1, Window: config.Duration(time.Second)}, store,
		Options{Counters: cs, Log: slog.New(slog.NewTextHandler(&buf, nil))})
	for i := 0; i < 5; i++ {
		if got := serve(h, "10.0.0.1", nil); got != 204 {
			t.Fatalf("request %d: %d, want 204 (fail open)", i, got)
		}
	}
	if got := testutil.ToFloat64(cs[FailedOpen]); got != 5 {
		t.Errorf("failed_open %v, want 5", got)
	}
	if n := strings.Count(buf.String(), "fail open"); n != 1 {
		t.Errorf("%d log lines, want 1:\n%s", n, buf.String())
	}
}

func TestIgnoredRanges(t *testing.T) {
	store := newMapStore()
	h, _ := newHandler(t, config.GlobalRateLimit{Limit: 1, Window: config.Duration(time.Minute), IgnoredRanges: []string{"10.1.0.0/16"}}, store, Options{})
	for i := 0; i < 3; i++ {
		if got := serve(h, "10.1.2.3", nil); got != 204 {
			t.Fatalf("ignored client: %d, want 204", got)
		}
	}
	if store.ops != 0 {
		t.Errorf("%d memcached operations for an ignored client, want 0", store.ops)
	}
	serve(h, "10.2.0.1", nil)
	if got := serve(h, "10.2.0.1", nil); got != 429 {
		t.Errorf("other client: %d, want 429", got)
	}
}

func TestStatus(t *testing.T) {
	h, _ := newHandler(t, config.GlobalRateLimit{Limit: 1, Window: config.Duration(time.Minute), Status: 503}, newMapStore(), Options{})
	serve(h, "10.0.0.1", nil)
	if got := serve(h, "10.0.0.1", nil); got != 503 {
		t.Errorf("%d, want 503", got)
	}
}

func TestKey(t *testing.T) {
	client := exchange.Request{ClientIP: netip.MustParseAddr("2001:db8::1")}
	tests := []struct {
		name   string
		parts  []config.KeyPart
		header http.Header
		want   string
	}{
		{"default", nil, nil, "ns.2001%3Adb8%3A%3A1"},
		{"header", []config.KeyPart{{Header: "X-Api-Client"}}, http.Header{"X-Api-Client": {"team a", "b"}}, "ns.team%20a"},
		{"absent header: client address", []config.KeyPart{{Header: "X-Api-Client"}}, nil, "ns.2001%3Adb8%3A%3A1"},
		{"combination", []config.KeyPart{{ClientAddress: true}, {Text: "-"}, {Header: "X-Api-Client"}}, http.Header{"X-Api-Client": {"a"}}, "ns.2001%3Adb8%3A%3A1-a"},
		{"cookie", []config.KeyPart{{Cookie: "user"}}, http.Header{"Cookie": {"a=1; user=kim"}}, "ns.kim"},
		{"empty combination: client address", []config.KeyPart{{Header: "A"}, {Cookie: "b"}}, nil, "ns.2001%3Adb8%3A%3A1"},
		{"too long: hashed", []config.KeyPart{{Header: "A"}}, http.Header{"A": {strings.Repeat("x", 300)}}, ""}, // checked below
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := client
			x.HTTP = httptest.NewRequest(http.MethodGet, "/", nil)
			for k, v := range tc.header {
				x.HTTP.Header[k] = v
			}
			got := counterPrefix("ns", key(tc.parts).value(&x))
			if tc.want == "" {
				if !strings.HasPrefix(got, "ns.~") || len(got) != len("ns.~")+64 {
					t.Errorf("got %q, want ns.~ and a SHA-256", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	c := NewClientStore(newMapStore(), Options{})
	good := config.GlobalRateLimit{Namespace: "n", Limit: 1, Window: config.Duration(time.Second)}
	for name, tc := range map[string]struct {
		cfg    config.GlobalRateLimit
		client *Client
	}{
		"no client":  {good, nil},
		"no limit":   {config.GlobalRateLimit{Namespace: "n", Window: config.Duration(time.Second)}, c},
		"bad ranges": {config.GlobalRateLimit{Namespace: "n", Limit: 1, Window: config.Duration(time.Second), IgnoredRanges: []string{"x"}}, c},
	} {
		if _, err := New(&tc.cfg, tc.client, ok); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := New(&good, c, ok); err != nil {
		t.Error(err)
	}
}

func BenchmarkServe(b *testing.B) {
	cfg := config.GlobalRateLimit{Namespace: "uid1", Limit: 1 << 30, Window: config.Duration(time.Minute)}
	h, err := New(&cfg, NewClientStore(newMapStore(), Options{}), ok)
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	x := &exchange.Request{HTTP: r, ClientIP: netip.MustParseAddr("10.0.0.1")}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.Serve(w, x)
	}
}

func BenchmarkCachedRefusal(b *testing.B) {
	cfg := config.GlobalRateLimit{Namespace: "uid1", Limit: 1, Window: config.Duration(time.Hour)}
	h, err := New(&cfg, NewClientStore(newMapStore(), Options{}), ok)
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	x := &exchange.Request{HTTP: r, ClientIP: netip.MustParseAddr("10.0.0.1")}
	w := httptest.NewRecorder()
	h.Serve(w, x)
	h.Serve(w, x)
	b.ReportAllocs()
	for b.Loop() {
		h.Serve(w, x)
	}
}
