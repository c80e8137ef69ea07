package sourcerange

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// sink keeps benchmarked results alive.
var sink bool

// benchSizes are the entry counts benchmarked: a typical list and the
// largest config accepts.
var benchSizes = []int{10, 1024}

// benchCase returns n random prefixes of one family, spread over the whole
// space, and 1024 addresses to look up, a quarter of them inside a prefix.
func benchCase(n int, v6 bool) ([]string, []netip.Prefix, []netip.Addr) {
	r := rand.New(rand.NewPCG(uint64(n), 42))
	entries := make([]string, n)
	prefixes := make([]netip.Prefix, n)
	for i := range n {
		bits := 8 + r.IntN(25)
		if v6 {
			bits = 16 + r.IntN(113)
		}
		prefixes[i] = netip.PrefixFrom(randomAddr(r, v6), bits).Masked()
		entries[i] = prefixes[i].String()
	}
	addrs := make([]netip.Addr, 1024)
	for i := range addrs {
		if i%4 == 0 {
			addrs[i] = lastAddr(prefixes[r.IntN(n)])
		} else {
			addrs[i] = randomAddr(r, v6)
		}
	}
	return entries, prefixes, addrs
}

func benchFamilies(b *testing.B, run func(b *testing.B, entries []string, prefixes []netip.Prefix, addrs []netip.Addr)) {
	for _, family := range []string{"v4", "v6"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", family, n), func(b *testing.B) {
				entries, prefixes, addrs := benchCase(n, family == "v6")
				b.ReportAllocs()
				run(b, entries, prefixes, addrs)
			})
		}
	}
}

func BenchmarkContains(b *testing.B) {
	benchFamilies(b, func(b *testing.B, entries []string, _ []netip.Prefix, addrs []netip.Addr) {
		s, err := NewSet(entries)
		if err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			sink = s.Contains(addrs[i&1023])
			i++
		}
	})
}

// BenchmarkLinearScan is the naive scan of every prefix, for comparison.
func BenchmarkLinearScan(b *testing.B) {
	benchFamilies(b, func(b *testing.B, _ []string, prefixes []netip.Prefix, addrs []netip.Addr) {
		i := 0
		for b.Loop() {
			sink = linearContains(prefixes, addrs[i&1023])
			i++
		}
	})
}

func BenchmarkNewSet(b *testing.B) {
	benchFamilies(b, func(b *testing.B, entries []string, _ []netip.Prefix, _ []netip.Addr) {
		for b.Loop() {
			if _, err := NewSet(entries); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkServe(b *testing.B) {
	benchFamilies(b, func(b *testing.B, entries []string, _ []netip.Prefix, addrs []netip.Addr) {
		next := exchange.HandlerFunc(func(http.ResponseWriter, *exchange.Request) {})
		h, err := New(nil, entries, next)
		if err != nil {
			b.Fatal(err)
		}
		x := &exchange.Request{HTTP: httptest.NewRequest(http.MethodGet, "/", nil)}
		w := nopWriter{h: http.Header{}}
		i := 0
		for b.Loop() {
			x.ClientIP = addrs[i&1023]
			h.Serve(w, x)
			i++
		}
	})
}
