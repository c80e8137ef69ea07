package balancer

import (
	"math/rand/v2"
	"strconv"
)

// Persistent picks the member a session cookie names, as ingress-nginx's
// affinity-mode: persistent: key is the MemberKey of the member, and the
// request goes there as long as the Set has it, whatever members were added
// meanwhile. A key the Set has no member for (no cookie, or its member is
// gone), or whose member was tried, gets a random untried member.
type Persistent struct{}

// Pick returns the member whose MemberKey is key, or a random untried one.
func (Persistent) Pick(s *Set, key uint64, tried []int) int {
	if i := s.KeyIndex(key); i >= 0 && !isTried(tried, i) {
		return i
	}
	return randomUntried(len(s.members), tried)
}

// Prepare builds the index of member keys now, so that no request pays for it.
func (Persistent) Prepare(s *Set) { s.keyIndex() }

// MemberKey is the key of a member address that a persistent session
// cookie holds: HashKey of the address. Writing it with AppendMemberKey and
// reading it back with ParseMemberKey gives the same key.
func MemberKey(address string) uint64 { return HashKey(address) }

// AppendMemberKey appends the text form of a key (base 36) to b.
func AppendMemberKey(b []byte, key uint64) []byte { return strconv.AppendUint(b, key, 36) }

// ParseMemberKey reads the text form of a key; false when s is not one.
func ParseMemberKey(s string) (uint64, bool) {
	k, err := strconv.ParseUint(s, 36, 64)
	return k, err == nil
}

// KeyIndex returns the index of the first member whose MemberKey is key, or
// -1 when there is none.
func (s *Set) KeyIndex(key uint64) int {
	if i, ok := s.keyIndex()[key]; ok {
		return int(i)
	}
	return -1
}

// keyIndex returns the members by MemberKey, building the map on first use.
func (s *Set) keyIndex() map[uint64]int32 {
	s.keysOnce.Do(func() {
		s.keys = make(map[uint64]int32, len(s.members))
		for i := len(s.members) - 1; i >= 0; i-- {
			s.keys[MemberKey(s.members[i].Address)] = int32(i)
		}
	})
	return s.keys
}

// Subset picks by consistent hashing of the key one subset of Size members
// and then a random untried member of it, as ingress-nginx's
// upstream-hash-by-subset: the members in their order are cut into
// consecutive subsets of Size (the last one filled up with the first
// members), and a ring of the subsets maps each key to one. A request that
// tried every member of its subset goes to a random untried member of the
// Set. A Set serves one Size: the one of its first Pick or Prepare.
type Subset struct{ Size int }

// Pick returns a random untried member of the key's subset.
func (a Subset) Pick(s *Set, key uint64, tried []int) int {
	n := len(s.members)
	if allTried(n, tried) {
		return -1
	}
	sub := s.subsetRing(a.Size)
	pos, _ := searchRing(sub.ring.hashes, key)
	if pos == len(sub.ring.hashes) {
		pos = 0
	}
	first := int(sub.ring.owners[pos]) * sub.size
	members := sub.members[first : first+sub.size]
	start := rand.IntN(len(members))
	for j := range members {
		if i := int(members[(start+j)%len(members)]); !isTried(tried, i) {
			return i
		}
	}
	return randomUntried(n, tried)
}

// Prepare builds the subsets and their ring now, so that no request pays
// for them.
func (a Subset) Prepare(s *Set) { s.subsetRing(a.Size) }

// subsets is the subset hashing of a Set: members holds the member indices
// of every subset one after the other, size by size, and the ring's owners
// are subset numbers.
type subsets struct {
	size    int
	members []int32
	ring    ring
}

// subsetRing returns the subsets of size members (at least 1, at most the
// member count), building them on first use.
func (s *Set) subsetRing(size int) *subsets {
	s.subsetOnce.Do(func() {
		n := len(s.members)
		size = max(1, min(size, n))
		count := (n + size - 1) / size
		sub := subsets{size: size, members: make([]int32, count*size)}
		for j := range sub.members {
			sub.members[j] = int32(j % n)
		}
		// The ring of the subsets: one point set per subset, named as
		// ingress-nginx names them (set1, set2, ...).
		names := make([]Member, count)
		for j := range names {
			names[j] = Member{Address: "set" + strconv.Itoa(j+1), Weight: 1}
		}
		sub.ring = newRing(names)
		s.subsets = sub
	})
	return &s.subsets
}

// randomUntried returns a random index of [0, n) that is not in tried, or
// -1 when there is none. Weights are not counted, as ingress-nginx's
// random choices do not count them.
func randomUntried(n int, tried []int) int {
	if allTried(n, tried) {
		return -1
	}
	start := rand.IntN(n)
	for j := range n {
		if i := (start + j) % n; !isTried(tried, i) {
			return i
		}
	}
	return -1
}
