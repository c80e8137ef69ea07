package main

import (
	"math"
	"testing"
	"time"
)

// same reports whether a and b are equal, NaN equal to NaN.
func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		xs   []float64
		want spread
	}{
		{"three repetitions", []float64{30, 10, 20}, spread{20, 10, 30}},
		{"even count: mean of the middle two", []float64{4, 1, 3, 2}, spread{2.5, 1, 4}},
		{"one", []float64{7}, spread{7, 7, 7}},
		{"a repetition without a value", []float64{5, nan, 1}, spread{3, 1, 5}},
		{"none", nil, spread{nan, nan, nan}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(tc.xs)
			if !same(got.median, tc.want.median) || !same(got.min, tc.want.min) || !same(got.max, tc.want.max) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSummarizeKeepsInput(t *testing.T) {
	xs := []float64{3, 1, 2}
	summarize(xs)
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("summarize reordered its input: %v", xs)
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		name string
		a, b float64
		want float64
	}{
		{"ramjetd uses more", 100, 40, 2.5},
		{"ramjetd serves less", 5000, 20000, 0.25},
		{"other measured nothing", 1, 0, math.NaN()},
		{"unknown", math.NaN(), 3, math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ratio(tc.a, tc.b); !same(got, tc.want) {
				t.Errorf("ratio(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		d := make([]time.Duration, len(n))
		for i, v := range n {
			d[i] = time.Duration(v) * time.Millisecond
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 down to 1
	}
	tests := []struct {
		name string
		d    []time.Duration
		q    float64
		want time.Duration
	}{
		{"p50 of 1..100", ms(hundred...), 0.5, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p99 of 3 is the largest", ms(5, 1, 9), 0.99, 9 * time.Millisecond},
		{"p50 of 3 is the middle", ms(5, 1, 9), 0.5, 5 * time.Millisecond},
		{"one", ms(4), 0.5, 4 * time.Millisecond},
		{"none", nil, 0.5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.d, tc.q); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"thousands", number(26709.01), "26,709"},
		{"millions", number(1234567), "1,234,567"},
		{"negative", number(-1234), "-1,234"},
		{"tens", number(34.44), "34.4"},
		{"units", number(1.234), "1.23"},
		{"below one", number(0.1234), "0.123"},
		{"zero", number(0), "0"},
		{"nothing measured", number(math.NaN()), "—"},
		{"count", whole(935), "935"},
		{"ratio", times(2.914), "2.91×"},
		{"spread", formatSpread(spread{20, 10, 30}, number), "20.0 (10.0–30.0)"},
		{"spread of equal values", formatSpread(spread{7, 7, 7}, number), "7.00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

// TestDemoteHeadings: the controller's report goes one level down, its
// text untouched.
func TestDemoteHeadings(t *testing.T) {
	got := demoteHeadings("# Controller\n\ntext # not a heading\n## Memory\n| a |")
	want := "## Controller\n\ntext # not a heading\n### Memory\n| a |"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
