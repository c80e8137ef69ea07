package balancer

import (
	"fmt"
	"testing"
)

// addresses returns the addresses 10.0.0.1:80 .. 10.0.0.n:80.
func addresses(from, to int) []Member {
	var ms []Member
	for i := from; i <= to; i++ {
		ms = append(ms, Member{Address: fmt.Sprintf("10.0.0.%d:80", i)})
	}
	return ms
}

func TestPersistentKeepsItsMember(t *testing.T) {
	before := NewSet(addresses(1, 3))
	after := NewSet(append(addresses(4, 9), addresses(1, 3)...)) // 6 members added, in front
	for i := range before.Len() {
		addr := before.Member(i).Address
		key := MemberKey(addr)
		for _, s := range []*Set{before, after} {
			if got := s.Member(Persistent{}.Pick(s, key, nil)).Address; got != addr {
				t.Errorf("key of %s: got %s, want %s", addr, got, addr)
			}
		}
	}
}

func TestPersistentWithoutItsMember(t *testing.T) {
	s := NewSet(addresses(1, 4))
	gone := MemberKey("10.0.0.9:80")
	seen := map[int]bool{}
	for range 200 {
		seen[Persistent{}.Pick(s, gone, nil)] = true
	}
	if len(seen) != 4 {
		t.Errorf("a key of a member that is gone reached %d members, want a random one of all 4", len(seen))
	}
	own := MemberKey("10.0.0.2:80")
	for range 50 {
		if i := (Persistent{}).Pick(s, own, []int{1}); i == 1 || i < 0 {
			t.Fatalf("tried member 1 (the key's): got %d, want another", i)
		}
	}
	if i := (Persistent{}).Pick(s, own, []int{0, 1, 2, 3}); i != -1 {
		t.Errorf("all tried: got %d, want -1", i)
	}
	if i := (Persistent{}).Pick(NewSet(nil), own, nil); i != -1 {
		t.Errorf("empty set: got %d, want -1", i)
	}
}

func TestMemberKeyText(t *testing.T) {
	k := MemberKey("[2001:db8::1]:8080")
	got, ok := ParseMemberKey(string(AppendMemberKey(nil, k)))
	if !ok || got != k {
		t.Errorf("round trip: got %d %v, want %d", got, ok, k)
	}
	for _, bad := range []string{"", "-1", "zzzzzzzzzzzzzzzzzz", "a|b"} {
		if _, ok := ParseMemberKey(bad); ok {
			t.Errorf("ParseMemberKey(%q) accepted", bad)
		}
	}
}

func TestSubset(t *testing.T) {
	s := NewSet(addresses(1, 7)) // subsets of 3: {1,2,3} {4,5,6} {7,1,2}
	sub := Subset{Size: 3}
	ks := keys(300)
	subsetsSeen := map[int]bool{}
	for _, k := range ks {
		// Every pick of one key falls in one subset, and the key reaches
		// all of that subset's members.
		seen := map[int]bool{}
		for range 60 {
			seen[sub.Pick(s, k, nil)] = true
		}
		r := s.subsetRing(3)
		pos, _ := searchRing(r.ring.hashes, k)
		if pos == len(r.ring.hashes) {
			pos = 0
		}
		n := int(r.ring.owners[pos])
		subsetsSeen[n] = true
		want := map[int]bool{}
		for _, i := range r.members[n*3 : n*3+3] {
			want[int(i)] = true
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Fatalf("key %d: members %v, want those of subset %d: %v", k, seen, n, want)
		}
	}
	if len(subsetsSeen) != 3 {
		t.Errorf("keys reached %d subsets, want 3", len(subsetsSeen))
	}
	if got := fmt.Sprint(s.subsetRing(3).members); got != "[0 1 2 3 4 5 6 0 1]" {
		t.Errorf("subsets: got %s, want [0 1 2 3 4 5 6 0 1] (the last filled up with the first members)", got)
	}
	// Once its subset was tried, a request goes to another member.
	k := ks[0]
	first := []int{sub.Pick(s, k, nil)}
	tried := first
	for range 6 {
		i := sub.Pick(s, k, tried)
		if i < 0 || isTried(tried, i) {
			t.Fatalf("tried %v: got %d", tried, i)
		}
		tried = append(tried, i)
	}
	if i := sub.Pick(s, k, tried); i != -1 {
		t.Errorf("all tried: got %d, want -1", i)
	}
}

func TestSubsetLargerThanSet(t *testing.T) {
	s := NewSet(addresses(1, 2))
	seen := map[int]bool{}
	for range 100 {
		seen[Subset{Size: 5}.Pick(s, 42, nil)] = true
	}
	if len(seen) != 2 {
		t.Errorf("a subset size above the member count: reached %d members, want both", len(seen))
	}
}

func BenchmarkPersistent(b *testing.B) {
	for _, n := range []int{3, 100} {
		s := benchSet(n, true)
		Persistent{}.Prepare(s)
		own := MemberKey(s.Member(n / 2).Address)
		for _, tc := range []struct {
			name  string
			key   uint64
			tried []int
		}{{"cookie", own, nil}, {"no-cookie", 1, nil}, {"retry", own, []int{n / 2}}} {
			b.Run(fmt.Sprintf("members=%d/%s", n, tc.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Persistent{}.Pick(s, tc.key, tc.tried)
				}
			})
		}
	}
}

func BenchmarkSubset(b *testing.B) {
	benchPick(b, Subset{Size: 3}, true)
}

func BenchmarkParseMemberKey(b *testing.B) {
	text := string(AppendMemberKey(nil, MemberKey("10.1.2.3:8080")))
	b.ReportAllocs()
	for b.Loop() {
		ParseMemberKey(text)
	}
}
