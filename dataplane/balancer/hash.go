package balancer

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

const (
	// pointsPerWeight is the number of ring points of each unit of weight.
	pointsPerWeight = 160
	// maxRingPoints bounds the ring; beyond it every member's points are
	// scaled down in proportion, to no fewer than minMemberPoints.
	maxRingPoints = 1 << 16
	// minMemberPoints is the fewest points a member has on a scaled ring.
	minMemberPoints = 16
)

// Hash picks members by consistent hashing of the key, such as HashKey of the
// client address or of an affinity cookie, so that one key keeps going to one
// member while the Set is unchanged, and mostly does when it changes.
type Hash struct{}

// Pick returns the owner of the first ring point at or after key, wrapping
// around, or when it was tried the owner of the next point with an untried
// one.
func (Hash) Pick(s *Set, key uint64, tried []int) int {
	if allTried(len(s.members), tried) {
		return -1
	}
	r := s.hashRing()
	pos, _ := searchRing(r.hashes, key)
	for range r.hashes {
		if pos == len(r.hashes) {
			pos = 0
		}
		if i := int(r.owners[pos]); !isTried(tried, i) {
			return i
		}
		pos++
	}
	return -1
}

// Prepare builds the ring now instead of on the first Pick.
func (Hash) Prepare(s *Set) { s.hashRing() }

// searchRing returns the position of the first point at or after key.
func searchRing(hashes []uint64, key uint64) (int, bool) {
	return slices.BinarySearch(hashes, key)
}

// ring is the consistent-hashing ring of a Set: the hashes of the points in
// increasing order and, at the same index, the member that owns each.
type ring struct {
	hashes []uint64
	owners []int32
}

// ringPoint is one point of a ring under construction.
type ringPoint struct {
	hash  uint64
	owner int32
}

// newRing returns the ring of members, whose points are sorted by hash.
// Equal hashes, which only duplicate addresses make likely, are ordered by
// address then index so that the ring does not depend on the order of the
// members.
func newRing(members []Member) ring {
	points := ringPoints(members)
	slices.SortFunc(points, func(a, b ringPoint) int {
		if a.hash != b.hash {
			return cmp.Compare(a.hash, b.hash)
		}
		return cmp.Or(
			strings.Compare(members[a.owner].Address, members[b.owner].Address),
			cmp.Compare(a.owner, b.owner),
		)
	})
	r := ring{hashes: make([]uint64, len(points)), owners: make([]int32, len(points))}
	for i, p := range points {
		r.hashes[i], r.owners[i] = p.hash, p.owner
	}
	return r
}

// ringPoints returns the points of every member, unsorted: the i-th point
// of a member is at HashKey(address + "#" + i).
func ringPoints(members []Member) []ringPoint {
	var total uint64
	for _, m := range members {
		total += uint64(m.Weight)
	}
	limit := maxRingPoints + uint64(len(members))*minMemberPoints
	points := make([]ringPoint, 0, min(total*pointsPerWeight, limit))
	var buf []byte
	for i, m := range members {
		buf = append(append(buf[:0], m.Address...), '#')
		prefix := len(buf)
		for p := range memberPoints(uint64(m.Weight), total) {
			buf = strconv.AppendUint(buf[:prefix], p, 10)
			points = append(points, ringPoint{HashBytes(buf), int32(i)})
		}
	}
	return points
}

// memberPoints returns the number of ring points of a member of the given
// weight when the weights add up to total: pointsPerWeight per unit, or when
// the ring would exceed maxRingPoints a proportional share of it, but never
// fewer than minMemberPoints.
func memberPoints(weight, total uint64) uint64 {
	if total*pointsPerWeight <= maxRingPoints {
		return weight * pointsPerWeight
	}
	return max(minMemberPoints, weight*maxRingPoints/total)
}

// FNV-1a 64 parameters.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// HashKey returns the 64-bit hash of s used as a Hash key and for ring
// points: FNV-1a 64 followed by the splitmix64 finaliser. Unlike hash/maphash
// it is not seeded, so it is the same in every process and on every machine.
func HashKey(s string) uint64 { return hashOf(s) }

// HashBytes returns HashKey(string(b)) without converting b.
func HashBytes(b []byte) uint64 { return hashOf(b) }

// hashOf is FNV-1a 64 of b finalised by splitmix64.
func hashOf[T string | []byte](b T) uint64 {
	h := uint64(fnvOffset)
	for i := range len(b) {
		h ^= uint64(b[i])
		h *= fnvPrime
	}
	return splitmix64(h)
}

// splitmix64 returns the output of splitmix64 whose state was x, which
// spreads every input bit over the whole result.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
