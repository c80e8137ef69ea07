package sourcerange

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestSetContains(t *testing.T) {
	tests := []struct {
		name    string
		cidrs   []string
		wantLen int
		in, out []string
	}{
		{name: "empty", wantLen: 0,
			out: []string{"0.0.0.0", "10.0.0.1", "::", "2001:db8::1"}},
		{name: "single IPv4 address", cidrs: []string{"192.0.2.7"}, wantLen: 1,
			in:  []string{"192.0.2.7", "::ffff:192.0.2.7"},
			out: []string{"192.0.2.6", "192.0.2.8", "::c000:207"}},
		{name: "single IPv6 address", cidrs: []string{"2001:db8::7"}, wantLen: 1,
			in:  []string{"2001:db8::7", "2001:db8:0:0:0:0:0:7"},
			out: []string{"2001:db8::6", "2001:db8::8", "0.0.0.7"}},
		{name: "IPv4 /32", cidrs: []string{"192.0.2.7/32"}, wantLen: 1,
			in:  []string{"192.0.2.7"},
			out: []string{"192.0.2.6", "192.0.2.8"}},
		{name: "IPv6 /128", cidrs: []string{"2001:db8::7/128"}, wantLen: 1,
			in:  []string{"2001:db8::7"},
			out: []string{"2001:db8::6", "2001:db8::8"}},
		{name: "IPv4 /0 is every IPv4 address and no IPv6 one", cidrs: []string{"0.0.0.0/0"}, wantLen: 1,
			in:  []string{"0.0.0.0", "1.2.3.4", "255.255.255.255", "::ffff:1.2.3.4"},
			out: []string{"::", "::1", "::1.2.3.4", "2001:db8::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{name: "IPv6 /0 is every IPv6 address and no IPv4 one", cidrs: []string{"::/0"}, wantLen: 1,
			in:  []string{"::", "::1", "2001:db8::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
			out: []string{"0.0.0.0", "1.2.3.4", "255.255.255.255", "::ffff:1.2.3.4"}},
		{name: "IPv4 prefix against IPv6 forms", cidrs: []string{"10.0.0.0/8"}, wantLen: 1,
			in:  []string{"10.0.0.1", "::ffff:10.0.0.1", "10.255.255.255"},
			out: []string{"::a00:1", "::10.0.0.1", "a00::1", "9.255.255.255", "11.0.0.0"}},
		{name: "IPv4-mapped entry is read as IPv4", cidrs: []string{"::ffff:10.0.0.0/104"}, wantLen: 1,
			in:  []string{"10.0.0.1", "::ffff:10.0.0.1"},
			out: []string{"::a00:1", "11.0.0.0"}},
		{name: "IPv4 boundaries", cidrs: []string{"192.168.0.0/16"}, wantLen: 1,
			in:  []string{"192.168.0.0", "192.168.255.255"},
			out: []string{"192.167.255.255", "192.169.0.0"}},
		{name: "IPv6 boundaries", cidrs: []string{"2001:db8::/32"}, wantLen: 1,
			in:  []string{"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"},
			out: []string{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::"}},
		{name: "IPv6 /64 boundaries at the 64-bit split", cidrs: []string{"2001:db8:0:1::/64"}, wantLen: 1,
			in:  []string{"2001:db8:0:1::", "2001:db8:0:1:ffff:ffff:ffff:ffff"},
			out: []string{"2001:db8:0:0:ffff:ffff:ffff:ffff", "2001:db8:0:2::"}},
		{name: "IPv6 /63 and /65", cidrs: []string{"2001:db8:0:2::/63", "2001:db8:0:8:8000::/65"}, wantLen: 2,
			in: []string{"2001:db8:0:2::", "2001:db8:0:3:ffff:ffff:ffff:ffff",
				"2001:db8:0:8:8000::", "2001:db8:0:8:ffff:ffff:ffff:ffff"},
			out: []string{"2001:db8:0:1:ffff:ffff:ffff:ffff", "2001:db8:0:4::",
				"2001:db8:0:8:7fff:ffff:ffff:ffff", "2001:db8:0:9::"}},
		{name: "nested prefixes merge", cidrs: []string{"10.0.0.128/25", "10.0.0.0/8", "10.0.0.0/24", "10.9.9.9"}, wantLen: 1,
			in:  []string{"10.0.0.0", "10.0.0.200", "10.200.0.1", "10.255.255.255"},
			out: []string{"9.255.255.255", "11.0.0.0"}},
		{name: "duplicates merge", cidrs: []string{"10.0.0.1", "10.0.0.1/32", "2001:db8::1", "2001:db8::1/128"}, wantLen: 2,
			in:  []string{"10.0.0.1", "2001:db8::1"},
			out: []string{"10.0.0.0", "10.0.0.2", "2001:db8::", "2001:db8::2"}},
		{name: "adjacent IPv4 halves merge", cidrs: []string{"10.0.0.128/25", "10.0.0.0/25"}, wantLen: 1,
			in:  []string{"10.0.0.0", "10.0.0.127", "10.0.0.128", "10.0.0.255"},
			out: []string{"9.255.255.255", "10.0.1.0"}},
		{name: "adjacent run that is no prefix merges", cidrs: []string{"10.0.2.0/24", "10.0.0.0/24", "10.0.1.0/24"}, wantLen: 1,
			in:  []string{"10.0.0.0", "10.0.1.128", "10.0.2.255"},
			out: []string{"9.255.255.255", "10.0.3.0"}},
		{name: "adjacent IPv6 across the 64-bit split merge", cidrs: []string{"2001:db8:0:1::/64", "2001:db8:0:2::/64"}, wantLen: 1,
			in:  []string{"2001:db8:0:1:ffff:ffff:ffff:ffff", "2001:db8:0:2::"},
			out: []string{"2001:db8:0:0:ffff:ffff:ffff:ffff", "2001:db8:0:3::"}},
		{name: "gap stays", cidrs: []string{"10.0.0.0/24", "10.0.2.0/24"}, wantLen: 2,
			in:  []string{"10.0.0.255", "10.0.2.0"},
			out: []string{"10.0.1.0", "10.0.1.255", "10.0.3.0"}},
		{name: "ends of the IPv4 space", cidrs: []string{"255.255.255.254/31", "255.255.255.255", "0.0.0.0"}, wantLen: 2,
			in:  []string{"0.0.0.0", "255.255.255.254", "255.255.255.255"},
			out: []string{"0.0.0.1", "255.255.255.253"}},
		{name: "ends of the IPv6 space", cidrs: []string{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::", "8000::/1"}, wantLen: 2,
			in:  []string{"::", "8000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
			out: []string{"::1", "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "0.0.0.0"}},
		{name: "IPv4 and IPv6 side by side", cidrs: []string{"10.0.0.0/8", "2001:db8::/32", "::a00:0/104"}, wantLen: 3,
			in:  []string{"10.1.1.1", "2001:db8::1", "::a00:1"},
			out: []string{"11.0.0.0", "2001:db9::", "::b00:0"}},
		{name: "entries with spaces", cidrs: []string{" 10.0.0.1 ", "\t2001:db8::/32"}, wantLen: 2,
			in:  []string{"10.0.0.1", "2001:db8::1"},
			out: []string{"10.0.0.2"}},
		{name: "zoned client address", cidrs: []string{"fe80::/10"}, wantLen: 1,
			in:  []string{"fe80::1%eth0", "fe80::1"},
			out: []string{"fec0::1%eth0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSet(tt.cidrs)
			if err != nil {
				t.Fatalf("NewSet(%q) error = %v, want none", tt.cidrs, err)
			}
			if got := s.Len(); got != tt.wantLen {
				t.Errorf("Len() = %d, want %d", got, tt.wantLen)
			}
			for _, a := range tt.in {
				if got := s.Contains(netip.MustParseAddr(a)); !got {
					t.Errorf("Contains(%s) = false, want true", a)
				}
			}
			for _, a := range tt.out {
				if got := s.Contains(netip.MustParseAddr(a)); got {
					t.Errorf("Contains(%s) = true, want false", a)
				}
			}
			if s.Contains(netip.Addr{}) {
				t.Errorf("Contains(zero Addr) = true, want false")
			}
			checkInvariants(t, s)
		})
	}
}

func TestSetZeroAddr(t *testing.T) {
	s, err := NewSet([]string{"0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatalf("NewSet error = %v, want none", err)
	}
	if got := s.Contains(netip.Addr{}); got {
		t.Errorf("Contains(zero Addr) = %v, want false", got)
	}
}

func TestNilSet(t *testing.T) {
	var s *Set
	if got := s.Len(); got != 0 {
		t.Errorf("nil Set Len() = %d, want 0", got)
	}
	if got := s.Contains(netip.MustParseAddr("10.0.0.1")); got {
		t.Errorf("nil Set Contains(10.0.0.1) = %v, want false", got)
	}
}

func TestNewSetErrors(t *testing.T) {
	tests := []struct {
		name  string
		cidrs []string
		want  string // the whole error
	}{
		{name: "bad address", cidrs: []string{"10.0.0.0/8", "10.0.0.300"},
			want: `entry 1: "10.0.0.300" is neither an address nor a CIDR`},
		{name: "IPv4 bits too long", cidrs: []string{"10.0.0.0/33"},
			want: `entry 0: "10.0.0.0/33" is not a CIDR`},
		{name: "IPv6 bits too long", cidrs: []string{"::1", "::2", "2001:db8::/129"},
			want: `entry 2: "2001:db8::/129" is not a CIDR`},
		{name: "negative bits", cidrs: []string{"10.0.0.0/-1"},
			want: `entry 0: "10.0.0.0/-1" is not a CIDR`},
		{name: "empty entry", cidrs: []string{"10.0.0.1", " "},
			want: `entry 1: "" is neither an address nor a CIDR`},
		{name: "host name", cidrs: []string{"example.com"},
			want: `entry 0: "example.com" is neither an address nor a CIDR`},
		{name: "two slashes", cidrs: []string{"10.0.0.0/8/8"},
			want: `entry 0: "10.0.0.0/8/8" is not a CIDR`},
		{name: "range syntax", cidrs: []string{"10.0.0.1-10.0.0.9"},
			want: `entry 0: "10.0.0.1-10.0.0.9" is neither an address nor a CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSet(tt.cidrs)
			if err == nil {
				t.Fatalf("NewSet(%q) = %v, nil; want error %q", tt.cidrs, s, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error = %q, want %q", got, tt.want)
			}
			if s != nil {
				t.Errorf("set = %v, want nil with an error", s)
			}
		})
	}
}

// TestSetMatchesLinearScan checks Contains against netip.Prefix.Contains
// over every entry, for random entries that overlap, nest and touch.
func TestSetMatchesLinearScan(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			entries := randomEntries(r, config.MaxSourceRanges)
			prefixes := parseAll(t, entries)
			s, err := NewSet(entries)
			if err != nil {
				t.Fatalf("NewSet error = %v, want none", err)
			}
			checkInvariants(t, s)
			if s.Len() > len(entries) {
				t.Errorf("Len() = %d, want at most %d", s.Len(), len(entries))
			}
			hits, fails := 0, 0
			for _, a := range probeAddrs(r, prefixes, 10_000) {
				want := linearContains(prefixes, a)
				if got := s.Contains(a); got != want {
					if fails++; fails <= 10 {
						t.Errorf("Contains(%s) = %v, want %v (linear scan)", a, got, want)
					}
				}
				if want {
					hits++
				}
			}
			// The probes must exercise both answers, or the test proves little.
			if hits < 1000 || hits > 9000 {
				t.Errorf("%d of 10000 probes are in the set, want 1000..9000", hits)
			}
			t.Logf("%d entries merged into %d ranges; %d of 10000 probes in", len(entries), s.Len(), hits)
		})
	}
}

// checkInvariants fails unless each family's ranges are well formed, sorted,
// disjoint and not adjacent.
func checkInvariants(t *testing.T, s *Set) {
	t.Helper()
	for name, sp := range map[string]spans{"v4": s.v4, "v6": s.v6} {
		for i, r := range sp {
			if r.first.cmp(r.last) > 0 {
				t.Errorf("%s range %d: first %v after last %v", name, i, r.first, r.last)
			}
			if i > 0 && r.first.cmp(sp[i-1].last.next()) <= 0 {
				t.Errorf("%s range %d starts at %v, want after %v (previous last + 1)", name, i, r.first, sp[i-1].last.next())
			}
		}
		if name == "v4" && len(sp) > 0 && sp[len(sp)-1].last.cmp(u128{lo: 1<<32 - 1}) > 0 {
			t.Errorf("v4 range ends at %v, beyond 32 bits", sp[len(sp)-1].last)
		}
	}
}

func parseAll(t *testing.T, entries []string) []netip.Prefix {
	t.Helper()
	prefixes := make([]netip.Prefix, len(entries))
	for i, e := range entries {
		p, err := config.ParsePrefix(e)
		if err != nil {
			t.Fatalf("ParsePrefix(%q) error = %v", e, err)
		}
		prefixes[i] = p
	}
	return prefixes
}

// linearContains is the reference: a scan of every prefix.
func linearContains(prefixes []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// randomEntries returns n entries, half IPv4 and half IPv6, in clusters so
// that they overlap; some are siblings or parents of earlier ones, so that
// ranges touch and nest, and some are written IPv4-mapped or as single
// addresses.
func randomEntries(r *rand.Rand, n int) []string {
	prefixes := make([]netip.Prefix, 0, n)
	for len(prefixes) < n {
		var p netip.Prefix
		switch k := r.IntN(8); {
		case k == 0 && len(prefixes) > 0:
			p = sibling(prefixes[r.IntN(len(prefixes))])
		case k == 1 && len(prefixes) > 0:
			p = parent(prefixes[r.IntN(len(prefixes))], 1+r.IntN(4))
		default:
			p = clusteredPrefix(r, len(prefixes)%2 == 1)
		}
		prefixes = append(prefixes, p)
	}
	entries := make([]string, n)
	for i, p := range prefixes {
		entries[i] = entryString(r, p)
	}
	return entries
}

// entryString writes p as a CIDR, sometimes as a bare address for a
// single-address prefix or IPv4-mapped for an IPv4 one.
func entryString(r *rand.Rand, p netip.Prefix) string {
	switch {
	case p.IsSingleIP() && r.IntN(2) == 0:
		return p.Addr().String()
	case p.Addr().Is4() && r.IntN(8) == 0:
		return netip.PrefixFrom(netip.AddrFrom16(p.Addr().As16()), p.Bits()+96).String()
	}
	return p.String()
}

// sibling is the other half of p's parent.
func sibling(p netip.Prefix) netip.Prefix {
	if p.Bits() == 0 {
		return p
	}
	b := p.Addr().AsSlice()
	i := p.Bits() - 1
	b[i/8] ^= 0x80 >> (i % 8)
	a, _ := netip.AddrFromSlice(b)
	return netip.PrefixFrom(a, p.Bits())
}

// parent is the prefix n bits shorter than p that holds it, but no shorter
// than /16 (IPv4) or /44 (IPv6), so that chains of parents do not swallow a
// whole cluster and leave nothing to tell apart.
func parent(p netip.Prefix, n int) netip.Prefix {
	least := 16
	if p.Addr().Is6() {
		least = 44
	}
	return netip.PrefixFrom(p.Addr(), max(p.Bits()-n, least)).Masked()
}

// clusteredPrefix is a prefix inside 10.0.0.0/12 or 2001:db8::/32 with a
// random 20-bit tail after that, so that short prefixes cover long ones.
func clusteredPrefix(r *rand.Rand, v6 bool) netip.Prefix {
	a := clusteredAddr(r, v6)
	if v6 {
		return netip.PrefixFrom(a, 40+r.IntN(89)).Masked()
	}
	return netip.PrefixFrom(a, 14+r.IntN(19)).Masked()
}

func clusteredAddr(r *rand.Rand, v6 bool) netip.Addr {
	if v6 {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], 0x20010db8_00000000|r.Uint64()&0xfffff000)
		binary.BigEndian.PutUint64(b[8:], r.Uint64())
		return netip.AddrFrom16(b)
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], 0x0a000000|r.Uint32()&0x000fffff)
	return netip.AddrFrom4(b)
}

func randomAddr(r *rand.Rand, v6 bool) netip.Addr {
	if v6 {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], r.Uint64())
		binary.BigEndian.PutUint64(b[8:], r.Uint64())
		return netip.AddrFrom16(b)
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], r.Uint32())
	return netip.AddrFrom4(b)
}

// probeAddrs returns n addresses: inside the clusters, at and just beyond
// the ends of the prefixes, anywhere, and IPv4-mapped IPv6 forms.
func probeAddrs(r *rand.Rand, prefixes []netip.Prefix, n int) []netip.Addr {
	addrs := make([]netip.Addr, 0, n)
	for len(addrs) < n {
		var a netip.Addr
		switch r.IntN(5) {
		case 0:
			a = clusteredAddr(r, r.IntN(2) == 0)
		case 1, 2:
			a = boundary(r, prefixes[r.IntN(len(prefixes))])
		case 3:
			a = randomAddr(r, r.IntN(2) == 0)
		default:
			a = netip.AddrFrom16(clusteredAddr(r, false).As16())
		}
		if a.IsValid() {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// boundary is the first or last address of p, or the one just before or
// after it (the zero Addr past either end of the address space).
func boundary(r *rand.Rand, p netip.Prefix) netip.Addr {
	switch r.IntN(4) {
	case 0:
		return p.Addr()
	case 1:
		return p.Addr().Prev()
	case 2:
		return lastAddr(p)
	}
	return lastAddr(p).Next()
}

// lastAddr is the last address of p, computed bit by bit.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestContainsDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	s, err := NewSet(randomEntries(r, config.MaxSourceRanges))
	if err != nil {
		t.Fatalf("NewSet error = %v", err)
	}
	for _, a := range []string{"10.0.0.1", "192.0.2.1", "::ffff:10.0.0.1", "2001:db8::1", "fe80::1%eth0"} {
		t.Run(a, func(t *testing.T) {
			addr := netip.MustParseAddr(a)
			if got := testing.AllocsPerRun(1000, func() { s.Contains(addr) }); got != 0 {
				t.Errorf("allocations per Contains = %v, want 0", got)
			}
		})
	}
}

func TestU128(t *testing.T) {
	max := u128{hi: ^uint64(0), lo: ^uint64(0)}
	tests := []struct {
		name      string
		got, want u128
	}{
		{"lowOnes 0", lowOnes(0), u128{}},
		{"lowOnes 1", lowOnes(1), u128{lo: 1}},
		{"lowOnes 32", lowOnes(32), u128{lo: 1<<32 - 1}},
		{"lowOnes 63", lowOnes(63), u128{lo: 1<<63 - 1}},
		{"lowOnes 64", lowOnes(64), u128{lo: ^uint64(0)}},
		{"lowOnes 65", lowOnes(65), u128{hi: 1, lo: ^uint64(0)}},
		{"lowOnes 128", lowOnes(128), max},
		{"next carries", u128{lo: ^uint64(0)}.next(), u128{hi: 1}},
		{"next wraps", max.next(), u128{}},
		{"fromAddr IPv4", fromAddr(netip.MustParseAddr("10.0.0.1")), u128{lo: 0x0a000001}},
		{"fromAddr IPv6", fromAddr(netip.MustParseAddr("2001:db8::1")), u128{hi: 0x20010db8_00000000, lo: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %#x, want %#x", tt.got, tt.want)
			}
		})
	}
	if c := (u128{hi: 1}).cmp(u128{lo: ^uint64(0)}); c != 1 {
		t.Errorf("cmp(2^64, 2^64-1) = %d, want 1", c)
	}
	if c := (u128{lo: 1}).cmp(u128{lo: 2}); c != -1 {
		t.Errorf("cmp(1, 2) = %d, want -1", c)
	}
	if c := max.cmp(max); c != 0 {
		t.Errorf("cmp(max, max) = %d, want 0", c)
	}
}

func ExampleSet_Contains() {
	s, _ := NewSet([]string{"10.0.0.0/8", "2001:db8::/32"})
	for _, a := range []string{"10.1.2.3", "::ffff:10.1.2.3", "::a01:203", "192.0.2.1"} {
		fmt.Println(a, s.Contains(netip.MustParseAddr(a)))
	}
	// Output:
	// 10.1.2.3 true
	// ::ffff:10.1.2.3 true
	// ::a01:203 false
	// 192.0.2.1 false
}
