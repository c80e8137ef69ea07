package main

import (
	"testing"
	"time"
)

func TestPacing(t *testing.T) {
	for _, tc := range []struct {
		rate, n int
		period  time.Duration
	}{
		{500, 1, 2 * time.Millisecond},
		{1500, 3, 2 * time.Millisecond},
		{2000, 2, time.Millisecond},
		{1000, 1, time.Millisecond},
		{333, 333, time.Second},
	} {
		n, period := pacing(tc.rate)
		if n != tc.n || period != tc.period {
			t.Errorf("pacing(%d) = %d every %s, want %d every %s", tc.rate, n, period, tc.n, tc.period)
		}
		if got := n * int(time.Second/period); got != tc.rate {
			t.Errorf("pacing(%d) offers %d a second", tc.rate, got)
		}
	}
}
