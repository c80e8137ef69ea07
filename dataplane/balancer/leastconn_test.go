package balancer

import (
	"slices"
	"sync/atomic"
	"testing"
)

// loaded returns a Set of members of the given weights with the given
// requests in flight.
func loaded(weights []uint32, inFlight []int64) *Set {
	s := NewSet(members(weights...))
	for i, n := range inFlight {
		s.Member(i).Stats.InFlight.Store(n)
	}
	return s
}

func TestLeastConn(t *testing.T) {
	tests := []struct {
		name     string
		weights  []uint32
		inFlight []int64
		cursor   uint64
		tried    []int
		want     int
	}{
		{"least loaded", []uint32{1, 1, 1}, []int64{5, 2, 7}, 0, nil, 1},
		{"least loaded after the cursor", []uint32{1, 1, 1}, []int64{1, 5, 7}, 2, nil, 0},
		{"weight divides load", []uint32{1, 3}, []int64{2, 5}, 0, nil, 1},
		{"weight not enough", []uint32{1, 3}, []int64{1, 4}, 0, nil, 0},
		{"equal ratio, cursor member first", []uint32{1, 2}, []int64{1, 2}, 1, nil, 1},
		{"zero weight is 1", []uint32{0, 2}, []int64{2, 3}, 0, nil, 1},
		{"skips tried", []uint32{1, 1, 1}, []int64{5, 2, 7}, 0, []int{1}, 0},
		{"skips all but one", []uint32{1, 1, 1}, []int64{0, 0, 9}, 0, []int{0, 1}, 2},
		{"large counts", []uint32{1000, 1}, []int64{1 << 40, 1 << 30}, 0, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc := LeastConn{Cursor: new(atomic.Uint64)}
			lc.Cursor.Store(tt.cursor)
			if got := lc.Pick(loaded(tt.weights, tt.inFlight), 0, tt.tried); got != tt.want {
				t.Errorf("Pick(in flight %v, weights %v, tried %v) = %d, want %d", tt.inFlight, tt.weights, tt.tried, got, tt.want)
			}
		})
	}
}

func TestLeastConnTiesRotate(t *testing.T) {
	tests := []struct {
		name     string
		weights  []uint32
		inFlight []int64
		want     []int
	}{
		{"all idle", []uint32{1, 1, 1}, []int64{0, 0, 0}, []int{0, 1, 2, 0, 1, 2}},
		{"equal ratios", []uint32{1, 2, 3}, []int64{1, 2, 3}, []int{0, 1, 2, 0, 1, 2}},
		{"two tied of three", []uint32{1, 1, 1}, []int64{0, 4, 0}, []int{0, 2, 2, 0, 2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := picks(LeastConn{Cursor: new(atomic.Uint64)}, loaded(tt.weights, tt.inFlight), len(tt.want))
			if !slices.Equal(got, tt.want) {
				t.Errorf("picks = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLeastConnFollowsLoad(t *testing.T) {
	// Picking and keeping every request in flight fills members in
	// proportion to their weights.
	s := NewSet(members(1, 2, 3))
	lc := LeastConn{Cursor: new(atomic.Uint64)}
	for range 600 {
		s.Member(lc.Pick(s, 0, nil)).Stats.InFlight.Add(1)
	}
	want := []int64{100, 200, 300}
	for i, w := range want {
		if got := s.Member(i).Stats.InFlight.Load(); got != w {
			t.Errorf("member %d has %d in flight, want %d", i, got, w)
		}
	}
}
