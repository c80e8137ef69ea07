package main

import (
	"math"
	"slices"
	"time"
)

// spread is the median, minimum and maximum of the repetitions of one
// measurement. The zero value (no repetition) has NaN fields.
type spread struct{ median, min, max float64 }

// summarize returns the spread of xs, ignoring NaNs (a repetition that
// measured nothing).
func summarize(xs []float64) spread {
	v := slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
	if len(v) == 0 {
		return spread{math.NaN(), math.NaN(), math.NaN()}
	}
	slices.Sort(v)
	return spread{median: median(v), min: v[0], max: v[len(v)-1]}
}

// median of sorted values, the mean of the middle two for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// ratio is a/b, NaN when either is unknown or b is 0.
func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// percentile is the nearest-rank q-quantile (0 < q <= 1) of d, which it
// sorts; 0 when d is empty.
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	rank := int(math.Ceil(q * float64(len(d))))
	return d[max(rank, 1)-1]
}
