package balancer

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

// keys returns n hash keys of distinct strings.
func keys(n int) []uint64 {
	ks := make([]uint64, n)
	for i := range ks {
		ks[i] = HashKey(fmt.Sprintf("client-%d", i))
	}
	return ks
}

// owners returns the address Hash picks for each key.
func owners(s *Set, ks []uint64) []string {
	got := make([]string, len(ks))
	for i, k := range ks {
		got[i] = s.Member(Hash{}.Pick(s, k, nil)).Address
	}
	return got
}

func TestHashKey(t *testing.T) {
	tests := []string{"", "a", "10.0.0.1", "10.0.0.1:8080#159", "INGRESSCOOKIE=6f1e2d"}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			f := fnv.New64a()
			f.Write([]byte(s))
			want := splitmix64(f.Sum64())
			if got := HashKey(s); got != want {
				t.Errorf("HashKey(%q) = %#x, want splitmix64(fnv1a) = %#x", s, got, want)
			}
			if got := HashBytes([]byte(s)); got != want {
				t.Errorf("HashBytes(%q) = %#x, want %#x", s, got, want)
			}
		})
	}
}

func TestHashKeyStable(t *testing.T) {
	// Pinned values, computed independently of this package: a change here
	// moves every key and ring point, breaking affinity across an upgrade.
	tests := []struct {
		in   string
		want uint64
	}{
		{"", 0xc3817c016ba4ff30},
		{"10.0.0.1", 0xd19a5d32fbff6d0a},
		{"10.0.0.1:80#0", 0xc1e4252bc624bc92},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := HashKey(tt.in); got != tt.want {
				t.Errorf("HashKey(%q) = %#x, want %#x", tt.in, got, tt.want)
			}
		})
	}
	// The first output of splitmix64 seeded with 0.
	if got, want := splitmix64(0), uint64(0xe220a8397b1dcdaf); got != want {
		t.Errorf("splitmix64(0) = %#x, want %#x", got, want)
	}
}

func TestHashKeyAllocs(t *testing.T) {
	s, b := "203.0.113.7", []byte("203.0.113.7")
	if allocs := testing.AllocsPerRun(1000, func() { HashKey(s); HashBytes(b) }); allocs != 0 {
		t.Errorf("HashKey and HashBytes allocate %v times, want 0", allocs)
	}
}

func TestHashSameKey(t *testing.T) {
	ms := members(1, 1, 1, 1, 1)
	a, b := NewSet(ms), NewSet(ms)
	reversed := slices.Clone(ms)
	slices.Reverse(reversed)
	r := NewSet(reversed)
	for i, k := range keys(1000) {
		first := owners(a, []uint64{k})[0]
		tests := []struct {
			name string
			set  *Set
		}{
			{"again", a},
			{"equal set", b},
			{"reversed order", r},
		}
		for _, tt := range tests {
			if got := owners(tt.set, []uint64{k})[0]; got != first {
				t.Fatalf("%s: key %d went to %s, want %s", tt.name, i, got, first)
			}
		}
	}
}

func TestHashDistribution(t *testing.T) {
	tests := []struct {
		name    string
		weights []uint32
		slack   float64 // allowed relative deviation from the weighted share
	}{
		{"4 equal members", []uint32{1, 1, 1, 1}, 0.30},
		{"weights 1 and 3", []uint32{1, 3}, 0.15},
		{"weights 1 2 3 4", []uint32{1, 2, 3, 4}, 0.30},
		{"capped ring", []uint32{1000, 1000, 1000, 1000}, 0.30},
	}
	const n = 10000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSet(members(tt.weights...))
			counts := make([]int, s.Len())
			for _, k := range keys(n) {
				counts[Hash{}.Pick(s, k, nil)]++
			}
			var total uint32
			for _, w := range tt.weights {
				total += w
			}
			for i, w := range tt.weights {
				want := float64(n) * float64(w) / float64(total)
				if math.Abs(float64(counts[i])-want) > tt.slack*want {
					t.Errorf("member %d (weight %d) got %d keys, want %.0f ± %.0f%%", i, w, counts[i], want, tt.slack*100)
				}
			}
		})
	}
}

func TestHashStability(t *testing.T) {
	abcd := []Member{{Address: "a:80"}, {Address: "b:80"}, {Address: "c:80"}, {Address: "d:80"}}
	e := Member{Address: "e:80"}
	tests := []struct {
		name      string
		after     []Member
		changed   string  // the member added or removed
		minMoved  float64 // bounds of the fraction of keys that move
		maxMoved  float64
		toChanged bool // moved keys go to changed (added) or come from it (removed)
	}{
		{"add e", append(slices.Clone(abcd), e), "e:80", 0.14, 0.26, true},
		{"add e first", append([]Member{e}, abcd...), "e:80", 0.14, 0.26, true},
		{"remove c", slices.Delete(slices.Clone(abcd), 2, 3), "c:80", 0.18, 0.32, false},
		{"remove a", abcd[1:], "a:80", 0.18, 0.32, false},
	}
	ks := keys(10000)
	before := owners(NewSet(abcd), ks)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := owners(NewSet(tt.after), ks)
			moved := 0
			for i := range ks {
				if before[i] == after[i] {
					if !tt.toChanged && before[i] == tt.changed {
						t.Fatalf("key %d stayed on removed %s", i, tt.changed)
					}
					continue
				}
				moved++
				if tt.toChanged && after[i] != tt.changed || !tt.toChanged && before[i] != tt.changed {
					t.Fatalf("key %d moved from %s to %s, want only moves involving %s", i, before[i], after[i], tt.changed)
				}
			}
			frac := float64(moved) / float64(len(ks))
			if frac < tt.minMoved || frac > tt.maxMoved {
				t.Errorf("moved %.3f of keys, want %.2f..%.2f", frac, tt.minMoved, tt.maxMoved)
			}
		})
	}
}

func TestHashTried(t *testing.T) {
	s := NewSet(members(1, 1, 1, 1))
	var h Hash
	for _, k := range keys(1000) {
		first := h.Pick(s, k, nil)
		second := h.Pick(s, k, []int{first})
		if second == first || second < 0 {
			t.Fatalf("Pick(tried [%d]) = %d, want another member", first, second)
		}
		if again := h.Pick(s, k, []int{first}); again != second {
			t.Fatalf("Pick(tried [%d]) = %d then %d, want the same", first, second, again)
		}
		// The fallback is consistent too: it is the owner of the key once
		// the first member is gone.
		rest := NewSet(slices.Delete(members(1, 1, 1, 1), first, first+1))
		if want := rest.Member(h.Pick(rest, k, nil)).Address; s.Member(second).Address != want {
			t.Fatalf("Pick(tried [%d]) = %s, want %s as without the member", first, s.Member(second).Address, want)
		}
	}
}

func TestRingSize(t *testing.T) {
	heavy := make([]uint32, 100)
	for i := range heavy {
		heavy[i] = 1000
	}
	tests := []struct {
		name       string
		weights    []uint32
		wantPoints []int // points of each member
	}{
		{"160 per unit of weight", []uint32{1, 2, 0}, []int{160, 320, 160}},
		{"capped", []uint32{1000, 1000, 1000, 1000}, []int{16384, 16384, 16384, 16384}},
		{"capped keeps a minimum", append(heavy, 1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSet(members(tt.weights...))
			ring := s.hashRing()
			if !slices.IsSorted(ring.hashes) {
				t.Errorf("ring hashes are not sorted")
			}
			points := make([]int, s.Len())
			for _, o := range ring.owners {
				points[o]++
			}
			if tt.wantPoints != nil && !slices.Equal(points, tt.wantPoints) {
				t.Errorf("points = %v, want %v", points, tt.wantPoints)
			}
			if got := len(ring.hashes); got > maxRingPoints+s.Len()*minMemberPoints {
				t.Errorf("ring has %d points, want at most %d", got, maxRingPoints+s.Len()*minMemberPoints)
			}
			if got := slices.Min(points); got < minMemberPoints {
				t.Errorf("a member has %d points, want at least %d", got, minMemberPoints)
			}
		})
	}
}
