package balancer

import "sync/atomic"

// maxRotation bounds the length of a round-robin rotation. Weights whose
// reduced sum exceeds it are scaled down to fit, though every member keeps at
// least one slot, so more than maxRotation members make a longer rotation.
const maxRotation = 4096

// RoundRobin picks members in turn, in proportion to their weights. Cursor
// counts the picks; the caller shares it across the Sets of one pool so that
// a reload continues the rotation. It must not be nil.
type RoundRobin struct{ Cursor *atomic.Uint64 }

// Pick returns the member at the next position of the rotation, or when it
// was tried the next untried one after it.
func (rr RoundRobin) Pick(s *Set, _ uint64, tried []int) int {
	n := len(s.members)
	if allTried(n, tried) {
		return -1
	}
	length := n
	if s.rotation != nil {
		length = len(s.rotation)
	}
	pos := int((rr.Cursor.Add(1) - 1) % uint64(length))
	for range length {
		if i := s.rotationMember(pos); !isTried(tried, i) {
			return i
		}
		if pos++; pos == length {
			pos = 0
		}
	}
	return -1
}

// rotationMember returns the member index at position pos of the rotation,
// which is the identity when the weights are uniform.
func (s *Set) rotationMember(pos int) int {
	if s.rotation == nil {
		return pos
	}
	return int(s.rotation[pos])
}

// newRotation returns the smooth weighted round-robin rotation of members,
// or nil when their weights are all equal and the rotation would be
// 0, 1, ..., n-1.
func newRotation(members []Member) []int32 {
	weights := make([]uint64, len(members))
	for i, m := range members {
		weights[i] = uint64(m.Weight)
	}
	total := reduce(weights)
	if total > maxRotation {
		for i, w := range weights {
			weights[i] = max(1, w*maxRotation/total)
		}
		total = reduce(weights)
	}
	if total == uint64(len(weights)) {
		return nil
	}
	return smoothRotation(weights, total)
}

// reduce divides weights by their greatest common divisor and returns their
// new sum.
func reduce(weights []uint64) uint64 {
	var g uint64
	for _, w := range weights {
		g = gcd(g, w)
	}
	var total uint64
	for i := range weights {
		weights[i] /= g
		total += weights[i]
	}
	return total
}

// gcd returns the greatest common divisor of a and b, with gcd(0, b) = b.
func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// smoothRotation runs total steps of nginx's smooth weighted round robin:
// every member's current value grows by its weight and the first largest is
// picked and loses total. After total steps every current value is back to
// zero, so the sequence repeats.
func smoothRotation(weights []uint64, total uint64) []int32 {
	rotation := make([]int32, total)
	current := make([]int64, len(weights))
	for step := range rotation {
		best := 0
		for i, w := range weights {
			current[i] += int64(w)
			if current[i] > current[best] {
				best = i
			}
		}
		current[best] -= int64(total)
		rotation[step] = int32(best)
	}
	return rotation
}
