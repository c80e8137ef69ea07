package balancer

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// benchSet returns a Set of n members of weights 1, 2, 3, 1, 2, 3, ...,
// or all 1 when uniform, each with a few requests in flight.
func benchSet(n int, uniform bool) *Set {
	weights := make([]uint32, n)
	for i := range weights {
		weights[i] = 1
		if !uniform {
			weights[i] = uint32(i%3 + 1)
		}
	}
	s := NewSet(members(weights...))
	for i := range n {
		s.Member(i).Stats.InFlight.Store(int64(i * 7 % 5))
	}
	return s
}

// benchPick measures alg.Pick on sets of 3 and 100 members, without and
// with one earlier try.
func benchPick(b *testing.B, alg Algorithm, uniform bool) {
	ks := keys(1024)
	for _, n := range []int{3, 100} {
		s := benchSet(n, uniform)
		for _, tried := range [][]int{nil, {1}} {
			b.Run(fmt.Sprintf("members=%d/tried=%d", n, len(tried)), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					alg.Pick(s, ks[i&1023], tried)
					i++
				}
			})
		}
	}
}

func BenchmarkRoundRobin(b *testing.B) {
	benchPick(b, RoundRobin{Cursor: new(atomic.Uint64)}, false)
}

func BenchmarkRoundRobinUniform(b *testing.B) {
	benchPick(b, RoundRobin{Cursor: new(atomic.Uint64)}, true)
}

func BenchmarkLeastConn(b *testing.B) {
	benchPick(b, LeastConn{Cursor: new(atomic.Uint64)}, false)
}

func BenchmarkHash(b *testing.B) {
	benchPick(b, Hash{}, false)
}

func BenchmarkRoundRobinParallel(b *testing.B) {
	s := benchSet(100, false)
	rr := RoundRobin{Cursor: new(atomic.Uint64)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rr.Pick(s, 0, nil)
		}
	})
}

func BenchmarkHashKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		HashKey("203.0.113.7")
	}
}

func BenchmarkNewSet(b *testing.B) {
	for _, n := range []int{3, 100, 1000} {
		ms := benchSet(n, false).members
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NewSet(ms)
			}
		})
	}
}
