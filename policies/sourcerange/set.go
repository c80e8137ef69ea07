package sourcerange

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Set is an immutable set of address ranges with lookups in O(log n). IPv4
// and IPv6 ranges are kept apart: an IPv4 prefix matches IPv4 clients
// (including IPv4-mapped IPv6 ones) and never an IPv6 address, and an IPv6
// prefix, even ::/0, never matches an IPv4 client, as in nginx.
type Set struct {
	v4 spans
	v6 spans
}

// NewSet parses cidrs (CIDRs or single addresses, surrounding spaces
// ignored, as config.ParsePrefix reads them) into a Set. Overlapping,
// nested and adjacent ranges are merged. An error names the index and the
// value of the first entry that does not parse.
func NewSet(cidrs []string) (*Set, error) {
	var v4, v6 spans
	for i, c := range cidrs {
		p, err := config.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if p.Addr().Is4() {
			v4 = append(v4, spanOf(p))
		} else {
			v6 = append(v6, spanOf(p))
		}
	}
	return &Set{v4: v4.merged(), v6: v6.merged()}, nil
}

// Contains reports whether a is in the set. IPv4-mapped IPv6 addresses are
// looked up as IPv4, zones are ignored, and the zero Addr is in no set. A
// nil Set is empty.
func (s *Set) Contains(a netip.Addr) bool {
	if s == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	if a.Is4() {
		return s.v4.contains(fromAddr(a))
	}
	return s.v6.contains(fromAddr(a))
}

// Len is the number of disjoint ranges the set holds after merging, IPv4
// and IPv6 together; 0 for a nil Set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.v4) + len(s.v6)
}

// u128 is an address as an unsigned 128-bit number; an IPv4 address takes
// the low 32 bits.
type u128 struct{ hi, lo uint64 }

// fromAddr is a as a number; a must be unmapped for an IPv4 address to
// take the low 32 bits.
func fromAddr(a netip.Addr) u128 {
	if a.Is4() {
		b := a.As4()
		return u128{lo: uint64(binary.BigEndian.Uint32(b[:]))}
	}
	b := a.As16()
	return u128{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:])}
}

// lowOnes is the number whose n low bits (0..128) are set.
func lowOnes(n int) u128 {
	if n >= 64 {
		return u128{hi: 1<<(n-64) - 1, lo: ^uint64(0)}
	}
	return u128{lo: 1<<n - 1}
}

// or is the bitwise OR of u and v.
func (u u128) or(v u128) u128 { return u128{hi: u.hi | v.hi, lo: u.lo | v.lo} }

// next is u+1, wrapping at 2^128.
func (u u128) next() u128 {
	lo := u.lo + 1
	hi := u.hi
	if lo == 0 {
		hi++
	}
	return u128{hi: hi, lo: lo}
}

// lessEq reports whether u <= v.
func (u u128) lessEq(v u128) bool { return u.hi < v.hi || u.hi == v.hi && u.lo <= v.lo }

// cmp is -1, 0 or +1 as u is less than, equal to or greater than v.
func (u u128) cmp(v u128) int {
	switch {
	case u == v:
		return 0
	case u.lessEq(v):
		return -1
	}
	return 1
}

// span is the inclusive range [first, last] of one family.
type span struct{ first, last u128 }

// spanOf is the range of a masked prefix.
func spanOf(p netip.Prefix) span {
	first := fromAddr(p.Addr())
	return span{first: first, last: first.or(lowOnes(p.Addr().BitLen() - p.Bits()))}
}

// spans are ranges of one family; after merged they are sorted, disjoint
// and not adjacent.
type spans []span

// merged sorts s by first address and joins overlapping and adjacent
// ranges, in place.
func (s spans) merged() spans {
	if len(s) == 0 {
		return nil
	}
	slices.SortFunc(s, func(a, b span) int { return a.first.cmp(b.first) })
	out := s[:1]
	for _, r := range s[1:] {
		cur := &out[len(out)-1]
		switch {
		case r.first.lessEq(cur.last) || r.first == cur.last.next():
			if !r.last.lessEq(cur.last) {
				cur.last = r.last
			}
		default:
			out = append(out, r)
		}
	}
	return slices.Clip(out)
}

// contains finds by binary search the last range starting at or before a
// and reports whether it reaches a.
func (s spans) contains(a u128) bool {
	lo, hi := 0, len(s) // s[:lo] start at or before a; s[hi:] after it
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s[mid].first.lessEq(a) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo > 0 && a.lessEq(s[lo-1].last)
}
