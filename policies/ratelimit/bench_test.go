package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// BenchmarkServe runs admitted requests through a route's limits (rps and
// rpm with bursts larger than the run, and requests in flight) from every
// core at once, spread over 1, 1000 and a million client addresses: the
// cost of the lookups and compare-and-swaps, and of their contention when
// every core hits the same client's words.
//
//	go test -run '^$' -bench BenchmarkServe -benchmem ./policies/ratelimit
func BenchmarkServe(b *testing.B) {
	for _, clients := range []int{1, 1000, 1_000_000} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			s := NewStore()
			cfg := &config.RateLimit{Zone: "z", RPS: 1_000_000, RPSBurst: 100_000_000, RPM: 1_000_000, RPMBurst: 100_000_000, Connections: 1_000_000}
			h, err := New(cfg, 1<<20, s.Begin(), exchange.HandlerFunc(func(http.ResponseWriter, *exchange.Request) {}))
			if err != nil {
				b.Fatal(err)
			}
			addrs := make([]netip.Addr, clients)
			for i := range addrs {
				addrs[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			}
			var next atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				x := &exchange.Request{HTTP: httptest.NewRequest("GET", "/", nil)}
				i := int(next.Add(1) * 7919)
				for pb.Next() {
					x.ClientIP = addrs[i%clients]
					i++
					h.Serve(nil, x)
				}
			})
		})
	}
}
