package balancer

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// members returns one member of each weight, at addresses 10.0.0.1:80 and
// up.
func members(weights ...uint32) []Member {
	ms := make([]Member, len(weights))
	for i, w := range weights {
		ms[i] = Member{Address: fmt.Sprintf("10.0.0.%d:80", i+1), Weight: w}
	}
	return ms
}

// picks returns n successive picks of alg on s without tries.
func picks(alg Algorithm, s *Set, n int) []int {
	got := make([]int, n)
	for i := range got {
		got[i] = alg.Pick(s, 0, nil)
	}
	return got
}

// algorithms returns one of each algorithm with fresh cursors.
func algorithms() map[string]Algorithm {
	return map[string]Algorithm{
		"round robin": RoundRobin{Cursor: new(atomic.Uint64)},
		"least conn":  LeastConn{Cursor: new(atomic.Uint64)},
		"hash":        Hash{},
	}
}

func TestNewSet(t *testing.T) {
	shared := new(Stats)
	in := []Member{
		{Address: "a:80", Weight: 0},
		{Address: "b:80", Weight: 7, Stats: shared},
		{Address: "a:80", Weight: 2},
	}
	s := NewSet(in)
	in[0].Address = "changed:80"

	if got, want := s.Len(), 3; got != want {
		t.Fatalf("Len() = %d, want %d", got, want)
	}
	tests := []struct {
		name      string
		i         int
		address   string
		weight    uint32
		wantStats *Stats // nil: any new Stats
	}{
		{"zero weight is 1, copied", 0, "a:80", 1, nil},
		{"given stats kept", 1, "b:80", 7, shared},
		{"duplicate kept in order", 2, "a:80", 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := s.Member(tt.i)
			if m.Address != tt.address || m.Weight != tt.weight {
				t.Errorf("Member(%d) = %s weight %d, want %s weight %d", tt.i, m.Address, m.Weight, tt.address, tt.weight)
			}
			if m.Stats == nil || tt.wantStats != nil && m.Stats != tt.wantStats {
				t.Errorf("Member(%d).Stats = %p, want %p (non-nil)", tt.i, m.Stats, tt.wantStats)
			}
		})
	}
	if s.Member(0).Stats == s.Member(2).Stats {
		t.Errorf("members 0 and 2 share a new Stats, want one each")
	}
}

func TestIndex(t *testing.T) {
	s := NewSet([]Member{{Address: "a:80"}, {Address: "b:80"}, {Address: "a:80"}})
	tests := []struct {
		address string
		want    int
	}{
		{"a:80", 0},
		{"b:80", 1},
		{"c:80", -1},
		{"", -1},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			if got := s.Index(tt.address); got != tt.want {
				t.Errorf("Index(%q) = %d, want %d", tt.address, got, tt.want)
			}
		})
	}
	if got := NewSet(nil).Index("a:80"); got != -1 {
		t.Errorf("empty Set Index = %d, want -1", got)
	}
}

func TestPickNone(t *testing.T) {
	three := NewSet(members(5, 1, 1))
	tests := []struct {
		name  string
		set   *Set
		tried []int
	}{
		{"empty set", NewSet(nil), nil},
		{"empty set with tries", NewSet(nil), []int{0}},
		{"all tried", three, []int{2, 0, 1}},
		{"all tried with repeats and strays", three, []int{1, 1, -1, 9, 0, 2}},
	}
	for _, tt := range tests {
		for name, alg := range algorithms() {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				if got := alg.Pick(tt.set, 42, tt.tried); got != -1 {
					t.Errorf("Pick(tried %v) = %d, want -1", tt.tried, got)
				}
			})
		}
	}
}

func TestPickSkipsTried(t *testing.T) {
	sets := map[string]*Set{
		"uniform":  NewSet(members(1, 1, 1, 1)),
		"weighted": NewSet(members(5, 1, 3, 1)),
	}
	for setName, s := range sets {
		for name, alg := range algorithms() {
			t.Run(setName+"/"+name, func(t *testing.T) {
				for mask := range 1<<s.Len() - 1 { // every subset but all
					var tried []int
					for i := range s.Len() {
						if mask&(1<<i) != 0 {
							tried = append(tried, i)
						}
					}
					for key := range uint64(50) {
						got := alg.Pick(s, HashKey(fmt.Sprint(key)), tried)
						if got < 0 || got >= s.Len() || slices.Contains(tried, got) {
							t.Fatalf("Pick(key %d, tried %v) = %d, want an untried member", key, tried, got)
						}
					}
				}
			})
		}
	}
}

func TestPickAllocs(t *testing.T) {
	s := NewSet(members(5, 1, 3, 1, 2))
	uniform := NewSet(members(1, 1, 1))
	tried := []int{0, 2}
	for name, alg := range algorithms() {
		for _, set := range []*Set{s, uniform} {
			t.Run(fmt.Sprintf("%s/%d members", name, set.Len()), func(t *testing.T) {
				key := uint64(0)
				allocs := testing.AllocsPerRun(1000, func() {
					key += 0x9e3779b97f4a7c15
					alg.Pick(set, key, nil)
					alg.Pick(set, key, tried)
				})
				if allocs != 0 {
					t.Errorf("Pick allocates %v times per run, want 0", allocs)
				}
			})
		}
	}
}

func TestConcurrentPick(t *testing.T) {
	const goroutines, perGoroutine = 7, 1000
	s := NewSet(members(5, 1, 1))
	for name, alg := range algorithms() {
		t.Run(name, func(t *testing.T) {
			counts := make([]atomic.Int64, s.Len())
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for k := range perGoroutine {
						i := alg.Pick(s, HashKey(fmt.Sprint(g, k)), nil)
						m := s.Member(i)
						m.Stats.InFlight.Add(1)
						counts[i].Add(1)
						m.Stats.InFlight.Add(-1)
					}
				})
			}
			wg.Wait()
			var total int64
			for i := range counts {
				total += counts[i].Load()
			}
			if total != goroutines*perGoroutine {
				t.Errorf("picks = %d, want %d", total, goroutines*perGoroutine)
			}
			if _, ok := alg.(RoundRobin); ok {
				want := []int64{5000, 1000, 1000}
				for i := range counts {
					if got := counts[i].Load(); got != want[i] {
						t.Errorf("member %d picked %d times, want %d", i, got, want[i])
					}
				}
			}
		})
	}
}
