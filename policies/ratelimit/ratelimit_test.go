package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// takeAt runs one request of client at time now (ns) through r.
func takeAt(r *requests, client netip.Addr, now time.Duration, burst uint64) bool {
	b, tag := r.place(client)
	return r.take(b, tag, r.units(int64(now)), burst)
}

func TestRequestsMath(t *testing.T) {
	a := netip.MustParseAddr("192.0.2.1")
	type step struct {
		at   time.Duration
		n    int // requests at that time
		want int // how many of them pass
	}
	tests := []struct {
		name     string
		interval time.Duration
		burst    uint64
		steps    []step
	}{
		{"no burst: one per interval", 100 * time.Millisecond, 0, []step{
			{0, 3, 1}, {50 * time.Millisecond, 1, 0}, {100 * time.Millisecond, 2, 1}, {250 * time.Millisecond, 1, 1},
		}},
		{"burst 5: six at once, then one per interval", time.Second, 5, []step{
			{0, 10, 6}, {500 * time.Millisecond, 1, 0}, {time.Second, 2, 1}, {3 * time.Second, 3, 2},
		}},
		{"an idle client gets its whole burst again", time.Second, 2, []step{
			{0, 5, 3}, {time.Hour, 5, 3},
		}},
		{"refused requests do not count", time.Second, 1, []step{
			{0, 2, 2}, {100 * time.Millisecond, 100, 0}, {time.Second, 1, 1},
		}},
		{"per minute", time.Minute / 10, 50, []step{
			{0, 60, 51}, {5 * time.Second, 1, 0}, {6 * time.Second, 1, 1}, {time.Minute, 10, 9},
		}},
		{"high rate: 1e6 per second", time.Microsecond, 5, []step{
			{0, 10, 6}, {time.Millisecond, 10, 6}, {time.Millisecond + 3*time.Microsecond, 10, 3},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRequests(1024, int64(tc.interval))
			for _, s := range tc.steps {
				got := 0
				for range s.n {
					if takeAt(r, a, s.at, tc.burst) {
						got++
					}
				}
				// The high rate's units are 15.6 ns: allow the rounding of one.
				if got != s.want && !(tc.interval < time.Millisecond && got >= s.want-1 && got <= s.want+1) {
					t.Errorf("at %v: %d of %d passed, want %d", s.at, got, s.n, s.want)
				}
			}
		})
	}
}

func TestRequestsPerClient(t *testing.T) {
	r := newRequests(1024, int64(time.Second))
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	if !takeAt(r, a, 0, 0) || takeAt(r, a, 0, 0) {
		t.Fatal("a: want one request then a refusal")
	}
	if !takeAt(r, b, 0, 0) {
		t.Fatal("b is refused: clients share a count")
	}
	// An IPv4-mapped address is the same client.
	if takeAt(r, netip.MustParseAddr("::ffff:192.0.2.1"), 0, 0) {
		t.Fatal("the mapped form of a is a new client")
	}
}

func TestRequestsWrapAround(t *testing.T) {
	// After the units wrap around (2^42 units), a stale entry must read as
	// an empty bucket, not as one far ahead.
	interval := time.Microsecond
	r := newRequests(1024, int64(interval))
	a := netip.MustParseAddr("192.0.2.1")
	for range 6 {
		takeAt(r, a, 0, 5)
	}
	wrap := time.Duration(float64(uint64(1)<<valueBits) / r.perUnit)
	if got := takeAt(r, a, wrap-time.Millisecond, 5); !got {
		t.Fatal("a client idle for almost a wrap period is refused")
	}
}

func TestEvictionKeepsMemoryBounded(t *testing.T) {
	r := newRequests(1024, int64(time.Second))
	if got := len(r.buckets) * ways; got != 1024 {
		t.Fatalf("table of %d words, want 1024", got)
	}
	// A million clients at once: a request of a new client passes (its
	// bucket evicts another), unless its tag is that of a client of its
	// bucket (8 in 2^22 per client: a few in a million), and the table
	// does not grow.
	refused := 0
	for i := range 1 << 20 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if !takeAt(r, a, 0, 0) {
			refused++
		}
	}
	if refused > 20 {
		t.Fatalf("%d new clients of a million refused, want a few (tag collisions)", refused)
	}
	if got := len(r.buckets) * ways; got != 1024 {
		t.Fatalf("table of %d words after a million clients, want 1024", got)
	}
	// The most recent client is still there: evictions take the oldest.
	last := netip.AddrFrom4([4]byte{10, 15, 255, 255})
	if takeAt(r, last, 0, 0) {
		t.Fatal("the last client was evicted")
	}
}

func TestEvictionPrefersEmptyBuckets(t *testing.T) {
	r := newRequests(8, int64(time.Second)) // one bucket of 8
	clients := make([]netip.Addr, 9)
	for i := range clients {
		clients[i] = netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})
	}
	// Client 0 drains by t=10s; clients 1..7 are limited at t=10s.
	takeAt(r, clients[0], 0, 0)
	for _, c := range clients[1:8] {
		takeAt(r, c, 10*time.Second, 0)
	}
	// A ninth client takes client 0's word; clients 1..7 stay limited.
	if !takeAt(r, clients[8], 10*time.Second, 0) {
		t.Fatal("ninth client refused")
	}
	for _, c := range clients[1:8] {
		if takeAt(r, c, 10*time.Second, 0) {
			t.Fatalf("%v was evicted instead of the drained client", c)
		}
	}
}

func TestConns(t *testing.T) {
	c := &conns{newTable(8)}
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	ba, ta := c.place(a)
	w1, w2 := c.acquire(ba, ta, 2), c.acquire(ba, ta, 2)
	if w1 == nil || w2 == nil {
		t.Fatal("two requests in flight refused with a limit of 2")
	}
	if c.acquire(ba, ta, 2) != nil {
		t.Fatal("third request in flight admitted")
	}
	bb, tb := c.place(b)
	wb := c.acquire(bb, tb, 2)
	if wb == nil {
		t.Fatal("other client refused")
	}
	release(w1)
	if w := c.acquire(ba, ta, 2); w == nil {
		t.Fatal("refused after a release")
	} else {
		release(w)
	}
	release(w2)
	release(wb)
	for i := range c.buckets[0] {
		if w := c.buckets[0][i].Load(); w != 0 {
			t.Fatalf("word %d = %#x after every release, want 0 (free)", i, w)
		}
	}
}

func TestConnsFullBucketRefuses(t *testing.T) {
	c := &conns{newTable(8)}
	for i := range 8 {
		b, tag := c.place(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}))
		if c.acquire(b, tag, 1) == nil {
			t.Fatalf("client %d refused", i)
		}
	}
	b, tag := c.place(netip.MustParseAddr("192.0.2.100"))
	if c.acquire(b, tag, 1) != nil {
		t.Fatal("a ninth client in flight got a word of a full bucket")
	}
}

// serve runs one request of client through h and returns its status.
func serve(h exchange.Handler, client string) int {
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	h.Serve(rec, &exchange.Request{HTTP: r, ClientIP: netip.MustParseAddr(client)})
	return rec.Code
}

var ok = exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { w.WriteHeader(200) })

func TestHandler(t *testing.T) {
	tests := []struct {
		name   string
		cfg    config.RateLimit
		client string
		n      int
		want   []int // statuses in order; the rest repeat the last
	}{
		{"rps burst 2", config.RateLimit{Zone: "z", RPS: 1, RPSBurst: 2}, "192.0.2.1", 5, []int{200, 200, 200, 503}},
		{"status 429", config.RateLimit{Zone: "z", RPS: 1, Status: 429}, "192.0.2.1", 3, []int{200, 429}},
		{"rps and rpm: the stricter wins", config.RateLimit{Zone: "z", RPS: 100, RPSBurst: 100, RPM: 1, RPMBurst: 1}, "192.0.2.1", 4, []int{200, 200, 503}},
		{"allowlisted client", config.RateLimit{Zone: "z", RPS: 1, Allowlist: []string{"192.0.2.0/24"}}, "192.0.2.9", 5, []int{200}},
		{"client outside the allowlist", config.RateLimit{Zone: "z", RPS: 1, Allowlist: []string{"198.51.100.0/24"}}, "192.0.2.9", 3, []int{200, 503}},
		{"no counted limit", config.RateLimit{Rate: 1 << 20}, "192.0.2.1", 5, []int{200}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			h, err := New(&tc.cfg, 0, s.Begin(), ok)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.n {
				want := tc.want[min(i, len(tc.want)-1)]
				if got := serve(h, tc.client); got != want {
					t.Fatalf("request %d: status %d, want %d", i+1, got, want)
				}
			}
		})
	}
}

func TestRPMRefusalIsTakenBackFromRPS(t *testing.T) {
	s := NewStore()
	h, err := New(&config.RateLimit{Zone: "z", RPS: 1, RPSBurst: 3, RPM: 1}, 0, s.Begin(), ok)
	if err != nil {
		t.Fatal(err)
	}
	serve(h, "192.0.2.1") // passes both
	for range 3 {
		serve(h, "192.0.2.1") // the rpm refuses: the rps must not count them
	}
	// The rps bucket holds one request: three more fit in its burst.
	b, tag := h.perSecond.place(netip.MustParseAddr("192.0.2.1"))
	now := h.perSecond.units(int64(time.Since(h.epoch)))
	for i := range 3 {
		if !h.perSecond.take(b, tag, now, 3) {
			t.Fatalf("rps take %d refused: refused requests were counted", i+1)
		}
	}
}

func TestReloadKeepsCounts(t *testing.T) {
	s := NewStore()
	cfg := &config.RateLimit{Zone: "default/app/uid", RPS: 1}
	h1, _ := New(cfg, 0, s.Begin(), ok)
	if serve(h1, "192.0.2.1") != 200 {
		t.Fatal("first request refused")
	}
	// A reload with the same zone: the client is still limited.
	u := s.Begin()
	h2, _ := New(cfg, 0, u, ok)
	s.Keep(u)
	if got := serve(h2, "192.0.2.1"); got != 503 {
		t.Fatalf("after a reload: %d, want 503 (the count is kept)", got)
	}
	// A reload without the zone drops its table.
	s.Keep(s.Begin())
	if s.Len() != 0 {
		t.Fatalf("%d tables kept after a load without the zone", s.Len())
	}
	// Another zone (another object) counts apart.
	u = s.Begin()
	h3, _ := New(&config.RateLimit{Zone: "default/other/uid", RPS: 1}, 0, u, ok)
	if got := serve(h3, "192.0.2.1"); got != 200 {
		t.Fatalf("another zone: %d, want 200", got)
	}
}

func TestHandlerConcurrent(t *testing.T) {
	s := NewStore()
	release := make(chan struct{})
	var started sync.WaitGroup
	slow := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
		started.Done()
		<-release
		w.WriteHeader(200)
	})
	h, _ := New(&config.RateLimit{Zone: "z", Connections: 2}, 0, s.Begin(), slow)
	var done sync.WaitGroup
	run := func(client string) {
		started.Add(1)
		done.Add(1)
		go func() { defer done.Done(); serve(h, client) }()
	}
	run("192.0.2.1")
	run("192.0.2.1")
	started.Wait()
	if got := serve(h, "192.0.2.1"); got != 503 {
		t.Errorf("third request in flight: %d, want 503", got)
	}
	run("192.0.2.2") // another client has its own count
	started.Wait()
	close(release)
	done.Wait()
	started.Add(1)
	if got := serve(h, "192.0.2.1"); got != 200 {
		t.Errorf("after the others ended: %d, want 200", got)
	}
}

func TestBandwidth(t *testing.T) {
	s := NewStore()
	body := make([]byte, 48<<10)
	send := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
		for i := 0; i < len(body); i += 4096 {
			w.Write(body[i : i+4096])
		}
	})
	// 16 KiB/s after 16 KiB: 16 KiB + one second's 16 KiB at once, the
	// last 16 KiB over about a second.
	h, _ := New(&config.RateLimit{Rate: 16 << 10, RateAfter: 16 << 10}, 0, s.Begin(), send)
	rec := httptest.NewRecorder()
	began := time.Now()
	h.Serve(rec, &exchange.Request{HTTP: httptest.NewRequest("GET", "/", nil)})
	took := time.Since(began)
	if rec.Body.Len() != len(body) {
		t.Fatalf("body of %d bytes, want %d", rec.Body.Len(), len(body))
	}
	if took < 700*time.Millisecond {
		t.Errorf("48 KiB at 16 KiB/s after 16 KiB took %v, want about 1s", took)
	}
	if took > 10*time.Second {
		t.Errorf("took %v, want about 1s", took)
	}
}

func TestServeAllocations(t *testing.T) {
	s := NewStore()
	h, _ := New(&config.RateLimit{Zone: "z", RPS: 1_000_000, RPSBurst: 1_000_000, RPM: 1_000_000, RPMBurst: 1_000_000, Connections: 1000}, 0, s.Begin(), exchange.HandlerFunc(func(http.ResponseWriter, *exchange.Request) {}))
	x := &exchange.Request{HTTP: httptest.NewRequest("GET", "/", nil), ClientIP: netip.MustParseAddr("192.0.2.1")}
	allocs := testing.AllocsPerRun(1000, func() { h.Serve(nil, x) })
	if allocs != 0 {
		t.Errorf("%v allocations per admitted request, want 0", allocs)
	}
}
