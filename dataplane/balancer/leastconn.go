package balancer

import "sync/atomic"

// LeastConn picks the member with the fewest requests in flight per unit of
// weight. Cursor rotates the start of the scan so that equally loaded members
// take turns; the caller may share it across Sets. It must not be nil.
//
// LeastConn reads Stats.InFlight and does not change it: the caller counts a
// request in when it sends it and out when it ends.
type LeastConn struct{ Cursor *atomic.Uint64 }

// Pick returns the untried member with the smallest InFlight/Weight, the first
// such from a rotating start when several are equal.
func (lc LeastConn) Pick(s *Set, _ uint64, tried []int) int {
	n := len(s.members)
	if allTried(n, tried) {
		return -1
	}
	i := int((lc.Cursor.Add(1) - 1) % uint64(n))
	best, bestLoad, bestWeight := -1, int64(0), int64(1)
	for range n {
		m := &s.members[i]
		load, weight := m.Stats.InFlight.Load(), int64(m.Weight)
		// load/weight < bestLoad/bestWeight, without division.
		if (best < 0 || load*bestWeight < bestLoad*weight) && !isTried(tried, i) {
			best, bestLoad, bestWeight = i, load, weight
		}
		if i++; i == n {
			i = 0
		}
	}
	return best
}
