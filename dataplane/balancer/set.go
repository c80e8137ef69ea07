// Package balancer picks the member of a pool that serves a request.
//
// A Set is an immutable list of members built once per configuration with
// everything the algorithms need precomputed, so that Pick, called on every
// request, takes no locks and allocates nothing. Three algorithms share it:
//
//   - RoundRobin walks a rotation of member indices built with the smooth
//     weighted round-robin of nginx: at each step every member's current
//     value grows by its weight, the largest is picked and loses the sum of
//     the weights. Members appear in proportion to their weights and
//     interleaved (weights 5, 1, 1 give a a b a c a a). When all weights are
//     equal there is no rotation, only a cursor modulo the member count.
//   - LeastConn picks the member with the fewest requests in flight per unit
//     of weight, starting its scan at a rotating cursor so ties take turns.
//   - Hash places 160 points per unit of weight for each member on a ring of
//     64-bit hashes and picks the owner of the first point at or after the
//     key. Adding or removing a member moves only the keys it gains or
//     loses, as long as the ring stays under its cap of 65536 points (409
//     members of weight 1); beyond it every member's points are scaled down.
//
// Each algorithm skips the members a request already tried, so a retry goes
// elsewhere. Stats are owned by the caller and shared across Sets, so a
// reload keeps in-flight counts, and the round-robin cursors are too, so a
// reload continues the rotation instead of restarting it.
//
// Two more serve session affinity and hash subsets: Persistent picks the
// member a key names (a session cookie holding MemberKey), and Subset
// hashes a key to a group of members and picks one of them at random.
package balancer

import (
	"sync"
	"sync/atomic"
)

// Stats are the live counters of one member address. The caller owns them and
// shares one *Stats per address across many Sets and across configuration
// reloads.
type Stats struct {
	InFlight atomic.Int64  // requests in flight
	Requests atomic.Uint64 // requests sent
	Failures atomic.Uint64 // failed tries
}

// Member is one backend of a Set.
type Member struct {
	Address string // host:port, the member's identity
	Weight  uint32 // 1..1000 (0 is treated as 1)
	Stats   *Stats // never nil in a Set (NewSet allocates one when nil)
}

// Set is an immutable list of members with everything the algorithms need
// precomputed. It is safe for concurrent use.
type Set struct {
	members  []Member
	index    map[string]int
	rotation []int32 // member indices of round robin; nil when uniform

	// The ring is built by the first Hash.Pick, so that sets of other
	// algorithms (and every member update of their pools) never pay for it.
	ringOnce sync.Once
	ring     ring

	// The member keys of Persistent and the subsets of Subset are built
	// on first use too, or by the algorithm's Prepare.
	keysOnce   sync.Once
	keys       map[uint64]int32
	subsetOnce sync.Once
	subsets    subsets
}

// hashRing returns the consistent-hashing ring, building it on first use.
func (s *Set) hashRing() *ring {
	s.ringOnce.Do(func() { s.ring = newRing(s.members) })
	return &s.ring
}

// NewSet returns a Set of a copy of members in the given order. In the copy a
// zero Weight becomes 1 and a nil Stats becomes a new one. NewSet does the
// work of round robin and the first Hash.Pick that of hashing (once per Set):
// their cost grows with the member count and weights, while Pick's does not.
func NewSet(members []Member) *Set {
	s := &Set{
		members: make([]Member, len(members)),
		index:   make(map[string]int, len(members)),
	}
	for i, m := range members {
		if m.Weight == 0 {
			m.Weight = 1
		}
		if m.Stats == nil {
			m.Stats = new(Stats)
		}
		s.members[i] = m
		if _, dup := s.index[m.Address]; !dup {
			s.index[m.Address] = i
		}
	}
	s.rotation = newRotation(s.members)
	return s
}

// Len returns the number of members of s.
func (s *Set) Len() int { return len(s.members) }

// Member returns the member at index i, which must be in [0, Len()). The
// member belongs to s and must not be modified.
func (s *Set) Member(i int) *Member { return &s.members[i] }

// Index returns the index of the first member with the given address, or -1
// when there is none.
func (s *Set) Index(address string) int {
	if i, ok := s.index[address]; ok {
		return i
	}
	return -1
}

// Preparer is an Algorithm that precomputes what its Pick needs in a Set
// (a ring, an index), so that no request pays for it.
type Preparer interface {
	Prepare(s *Set)
}

// Algorithm picks a member of a Set.
type Algorithm interface {
	// Pick returns the index of a member of s that is not in tried, or -1
	// when s is empty or every member was tried. key is only used by Hash.
	// Pick takes no locks and allocates nothing.
	Pick(s *Set, key uint64, tried []int) int
}

// isTried reports whether index i is in tried.
func isTried(tried []int, i int) bool {
	for _, t := range tried {
		if t == i {
			return true
		}
	}
	return false
}

// allTried reports whether every index in [0, n) is in tried, which is also
// true when n is 0.
func allTried(n int, tried []int) bool {
	if len(tried) < n {
		return false
	}
	for i := range n {
		if !isTried(tried, i) {
			return false
		}
	}
	return true
}
