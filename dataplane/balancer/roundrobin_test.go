package balancer

import (
	"slices"
	"sync/atomic"
	"testing"
)

// maxRuns returns, for each member, the longest run of consecutive picks of
// it in seq.
func maxRuns(seq []int, n int) []int {
	runs := make([]int, n)
	prev, run := -1, 0
	for _, i := range seq {
		if i == prev {
			run++
		} else {
			prev, run = i, 1
		}
		runs[i] = max(runs[i], run)
	}
	return runs
}

// count returns how many times each member appears in seq.
func count(seq []int, n int) []int {
	counts := make([]int, n)
	for _, i := range seq {
		counts[i]++
	}
	return counts
}

func TestRoundRobinWeights(t *testing.T) {
	tests := []struct {
		name       string
		weights    []uint32
		wantCycle  int   // rotation length
		wantCounts []int // picks of each member in one cycle
		wantSeq    []int // the first picks, when given
		wantMaxRun []int // longest run of each member over three cycles
	}{
		{
			name:    "5 1 1 interleaves like nginx",
			weights: []uint32{5, 1, 1}, wantCycle: 7,
			wantCounts: []int{5, 1, 1},
			wantSeq:    []int{0, 0, 1, 0, 2, 0, 0},
			wantMaxRun: []int{4, 1, 1},
		},
		{
			name:    "3 2",
			weights: []uint32{3, 2}, wantCycle: 5,
			wantCounts: []int{3, 2},
			wantSeq:    []int{0, 1, 0, 1, 0},
			wantMaxRun: []int{2, 1},
		},
		{
			name:    "common divisor is reduced",
			weights: []uint32{200, 100, 300}, wantCycle: 6,
			wantCounts: []int{2, 1, 3},
			wantSeq:    []int{2, 0, 1, 2, 0, 2},
			wantMaxRun: []int{1, 1, 2},
		},
		{
			name:    "zero weight is 1",
			weights: []uint32{0, 2}, wantCycle: 3,
			wantCounts: []int{1, 2},
			wantSeq:    []int{1, 0, 1},
			wantMaxRun: []int{1, 2},
		},
		{
			name:    "1000 and 1 both kept",
			weights: []uint32{1000, 1}, wantCycle: 1001,
			wantCounts: []int{1000, 1},
			wantMaxRun: []int{1000, 1},
		},
		{
			name:    "huge ratio scaled to the cap",
			weights: []uint32{1_000_000, 1}, wantCycle: 4096,
			wantCounts: []int{4095, 1},
			wantMaxRun: []int{4095, 1},
		},
		{
			name:    "scaled member never reaches zero",
			weights: []uint32{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1},
			// 1000*4096/10001 = 409 each; the 1 would round to 0.
			wantCycle:  4091,
			wantCounts: []int{409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 1},
			wantMaxRun: []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSet(members(tt.weights...))
			if got := len(s.rotation); got != tt.wantCycle {
				t.Fatalf("rotation length = %d, want %d", got, tt.wantCycle)
			}
			seq := picks(RoundRobin{Cursor: new(atomic.Uint64)}, s, 3*tt.wantCycle)
			if got := count(seq[:tt.wantCycle], s.Len()); !slices.Equal(got, tt.wantCounts) {
				t.Errorf("picks in one cycle = %v, want %v", got, tt.wantCounts)
			}
			if !slices.Equal(seq[:tt.wantCycle], seq[tt.wantCycle:2*tt.wantCycle]) {
				t.Errorf("second cycle differs from the first")
			}
			if got := seq[:len(tt.wantSeq)]; !slices.Equal(got, tt.wantSeq) {
				t.Errorf("sequence = %v, want %v", got, tt.wantSeq)
			}
			if got := maxRuns(seq, s.Len()); !slices.Equal(got, tt.wantMaxRun) {
				t.Errorf("longest runs = %v, want %v", got, tt.wantMaxRun)
			}
		})
	}
}

func TestRoundRobinScaledManyMembers(t *testing.T) {
	weights := make([]uint32, 100)
	var total uint64
	for i := range weights {
		weights[i] = uint32(i + 1) // sum 5050, over the cap
		total += uint64(i + 1)
	}
	s := NewSet(members(weights...))
	if got := len(s.rotation); got > maxRotation {
		t.Fatalf("rotation length = %d, want at most %d", got, maxRotation)
	}
	counts := count(picks(RoundRobin{Cursor: new(atomic.Uint64)}, s, len(s.rotation)), s.Len())
	for i, w := range weights {
		want := max(1, int(uint64(w)*maxRotation/total))
		if counts[i] != want {
			t.Errorf("member %d (weight %d) picked %d times per cycle, want %d", i, w, counts[i], want)
		}
	}
}

func TestRoundRobinUniform(t *testing.T) {
	tests := []struct {
		name    string
		weights []uint32
		want    []int
	}{
		{"one member", []uint32{1}, []int{0, 0, 0}},
		{"weights 1", []uint32{1, 1, 1}, []int{0, 1, 2, 0, 1, 2, 0}},
		{"equal weights 7", []uint32{7, 7, 7, 7}, []int{0, 1, 2, 3, 0, 1}},
		{"zero and 1 are equal", []uint32{0, 1}, []int{0, 1, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSet(members(tt.weights...))
			if s.rotation != nil {
				t.Errorf("rotation = %v, want none", s.rotation)
			}
			if got := picks(RoundRobin{Cursor: new(atomic.Uint64)}, s, len(tt.want)); !slices.Equal(got, tt.want) {
				t.Errorf("picks = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRoundRobinReload(t *testing.T) {
	tests := []struct {
		name   string
		before []Member
		after  []Member
		want   []string // addresses of 2 picks before, then 4 after
	}{
		{
			name:   "same members",
			before: members(1, 1, 1),
			after:  members(1, 1, 1),
			want:   []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"},
		},
		{
			name:   "member added",
			before: members(1, 1, 1),
			after:  members(1, 1, 1, 1),
			want:   []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80", "10.0.0.1:80", "10.0.0.2:80"},
		},
		{
			name:   "weighted",
			before: members(2, 1),
			after:  members(2, 1),
			want:   []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.1:80", "10.0.0.1:80", "10.0.0.2:80", "10.0.0.1:80"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr := RoundRobin{Cursor: new(atomic.Uint64)}
			var got []string
			for _, i := range picks(rr, NewSet(tt.before), 2) {
				got = append(got, tt.before[i].Address)
			}
			for _, i := range picks(rr, NewSet(tt.after), 4) {
				got = append(got, tt.after[i].Address)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("picks = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRoundRobinTried(t *testing.T) {
	tests := []struct {
		name    string
		weights []uint32
		cursor  uint64
		tried   []int
		want    int
	}{
		{"uniform, next member", []uint32{1, 1, 1}, 0, []int{0}, 1},
		{"uniform, wraps", []uint32{1, 1, 1}, 2, []int{2}, 0},
		{"uniform, two tried", []uint32{1, 1, 1}, 0, []int{0, 1}, 2},
		{"weighted, past the run", []uint32{5, 1, 1}, 0, []int{0}, 1},
		{"weighted, next untried slot", []uint32{5, 1, 1}, 0, []int{0, 1}, 2},
		{"weighted, wraps", []uint32{5, 1, 1}, 5, []int{0}, 1},
		{"stray indices ignored", []uint32{1, 1}, 0, []int{-1, 7}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr := RoundRobin{Cursor: new(atomic.Uint64)}
			rr.Cursor.Store(tt.cursor)
			if got := rr.Pick(NewSet(members(tt.weights...)), 0, tt.tried); got != tt.want {
				t.Errorf("Pick(cursor %d, tried %v) = %d, want %d", tt.cursor, tt.tried, got, tt.want)
			}
		})
	}
}
