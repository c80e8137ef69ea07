package globalratelimit

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/test/memcached"
)

// TestMemcached: two replicas (two Clients) share one limit in a real
// memcached, and its counter is ingress-nginx's key with a decimal value.
func TestMemcached(t *testing.T) {
	addr := memcached.Start(t)
	cfg := config.GlobalRateLimit{Namespace: "uid1", Limit: 4, Window: config.Duration(time.Hour)}
	_, port, _ := net.SplitHostPort(addr)
	var replicas []*Handler
	// the second replica names the server, resolved when it connects.
	for _, a := range []string{addr, net.JoinHostPort("localhost", port)} {
		c := NewClient(&config.Memcached{Addresses: []string{a}}, Options{Counters: counters()})
		t.Cleanup(c.Close)
		h, err := New(&cfg, c, ok)
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, h)
	}
	passed := 0
	for i := 0; i < 10; i++ {
		if serve(replicas[i%2], "10.0.0.1", nil) == http.StatusNoContent {
			passed++
		}
	}
	// The estimate refuses before the count reaches the limit (requests at
	// the start of an hour-long window extrapolate to many more); at least
	// one passes and no more than the limit.
	if passed < 1 || passed > 4 {
		t.Errorf("%d requests passed, want 1..4", passed)
	}
	id := time.Now().Unix() / 3600
	it, err := memcache.New(addr).Get("uid1.10.0.0.1." + itoa(id) + ".counter")
	if err != nil {
		t.Fatalf("counter: %v", err)
	}
	if string(it.Value) != itoa(int64(passed)) {
		t.Errorf("counter %q, want %d", it.Value, passed)
	}
}

// TestMemcachedIncrAdd: the first increment of a counter adds it, the
// next ones increment it; a missing counter reads 0.
func TestMemcachedIncrAdd(t *testing.T) {
	addr := memcached.Start(t)
	s := &memcachedStore{mc: memcache.New(addr)}
	for want := uint64(1); want <= 3; want++ {
		n, err := s.Incr("k", 60)
		if err != nil || n != want {
			t.Fatalf("incr: %d, %v; want %d", n, err, want)
		}
	}
	a, b, err := s.Counts("k", "missing")
	if err != nil || a != 3 || b != 0 {
		t.Errorf("counts %d %d %v, want 3 0", a, b, err)
	}
}

// TestMemcachedUnreachable: nothing listens: requests pass at once,
// counted as failed_open.
func TestMemcachedUnreachable(t *testing.T) {
	cs := counters()
	c := NewClient(&config.Memcached{Addresses: []string{memcached.FreeAddress(t)}, Timeout: config.Duration(20 * time.Millisecond)}, Options{Counters: cs})
	cfg := config.GlobalRateLimit{Namespace: "uid1", Limit: 1, Window: config.Duration(time.Second)}
	h, err := New(&cfg, c, ok)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	for i := 0; i < 3; i++ {
		if got := serve(h, "10.0.0.1", nil); got != http.StatusNoContent {
			t.Fatalf("%d, want 204 (fail open)", got)
		}
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("3 requests took %s", d)
	}
	if got := testutil.ToFloat64(cs[FailedOpen]); got != 3 {
		t.Errorf("failed_open %v, want 3", got)
	}
}

func itoa(n int64) string { return counterKey("", n)[1 : len(counterKey("", n))-len(".counter")] }

// TestMemcachedServers: with two servers each counter lives on the one its
// key's hash picks, and a request reads its two windows from both.
func TestMemcachedServers(t *testing.T) {
	a, b := memcached.Start(t), memcached.Start(t)
	cs := counters()
	c := NewClient(&config.Memcached{Addresses: []string{a, b}}, Options{Counters: cs})
	cfg := config.GlobalRateLimit{Namespace: "uid1", Limit: 100, Window: config.Duration(time.Hour)}
	h, err := New(&cfg, c, ok)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		serve(h, "10.0.0."+itoa(int64(i+1)), nil)
	}
	if got := testutil.ToFloat64(cs[Passed]); got != 20 {
		t.Fatalf("passed %v, want 20 (failed_open %v)", got, testutil.ToFloat64(cs[FailedOpen]))
	}
	id := time.Now().Unix() / 3600
	held := map[string]int{}
	for i := 0; i < 20; i++ {
		key := "uid1.10.0.0." + itoa(int64(i+1)) + "." + itoa(id) + ".counter"
		for _, addr := range []string{a, b} {
			if _, err := memcache.New(addr).Get(key); err == nil {
				held[addr]++
			}
		}
	}
	if held[a]+held[b] != 20 || held[a] == 0 || held[b] == 0 {
		t.Errorf("counters held %v, want the 20 spread over both servers", held)
	}
}
