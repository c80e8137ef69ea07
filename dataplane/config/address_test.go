package config_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TestCheckMemberIP is the address rule's table: every kind it refuses,
// the IPv4-mapped forms of them, and what it lets through.
func TestCheckMemberIP(t *testing.T) {
	tests := []struct {
		addr string
		want config.AddressKind // "" allowed
	}{
		{"127.0.0.1", config.Loopback},
		{"127.255.255.254", config.Loopback},
		{"::1", config.Loopback},
		{"::ffff:127.0.0.1", config.Loopback},
		{"0.0.0.0", config.Unspecified},
		{"0.1.2.3", config.Unspecified},
		{"::", config.Unspecified},
		{"::ffff:0.0.0.0", config.Unspecified},
		{"169.254.169.254", config.LinkLocal},
		{"169.254.0.1", config.LinkLocal},
		{"::ffff:169.254.169.254", config.LinkLocal},
		{"fe80::1", config.LinkLocal},
		{"febf::1", config.LinkLocal},
		{"224.0.0.1", config.LinkLocal}, // link-local multicast
		{"ff02::1", config.LinkLocal},
		{"224.1.1.1", config.Multicast},
		{"239.255.255.250", config.Multicast},
		{"ff05::1", config.Multicast},
		{"255.255.255.255", config.Broadcast},
		{"fe80::1%eth0", config.Zoned},
		{"2001:db8::1%eth0", config.Zoned},

		{"10.0.0.1", ""},
		{"198.18.0.1", ""},
		{"100.64.0.1", ""},
		{"1.2.3.4", ""},
		{"240.0.0.1", ""},
		{"255.255.255.254", ""},
		{"::ffff:10.0.0.1", ""},
		{"2001:db8::1", ""},
		{"fd00::1", ""},
		{"fec0::1", ""},
		// Neither is routed to the local host (Linux sends them out), so
		// they are not judged as the IPv4 address they embed.
		{"::7f00:1", ""},
		{"64:ff9b::7f00:1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			ip := netip.MustParseAddr(tc.addr)
			err := config.CheckMemberIP(ip)
			var refused *config.AddressError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckMemberIP(%s) = %v, want nil", tc.addr, err)
			case tc.want == "":
				return
			case !errors.As(err, &refused) || refused.Kind != tc.want:
				t.Fatalf("CheckMemberIP(%s) = %v, want an AddressError of kind %s", tc.addr, err, tc.want)
			case !errors.Is(err, config.ErrLocalAddress):
				t.Errorf("CheckMemberIP(%s) = %v, which is not an ErrLocalAddress", tc.addr, err)
			case refused.Addr != ip:
				t.Errorf("the error names %s, want %s", refused.Addr, ip)
			}
		})
	}
}

func TestAddressErrorMessage(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1":       "127.0.0.1 is a loopback address",
		"0.0.0.0":         "0.0.0.0 is an unspecified address",
		"169.254.169.254": "169.254.169.254 is a link-local address",
	} {
		if got := config.CheckMemberIP(netip.MustParseAddr(addr)).Error(); got != want {
			t.Errorf("CheckMemberIP(%s): %q, want %q", addr, got, want)
		}
	}
}

// TestMembersOfAPIPools: the seeds of a members_from: api pool pass the
// address rule (server.admin.allow_loopback_members lets loopback ones
// through, and only those); a static pool, written by hand, may name any
// address.
func TestMembersOfAPIPools(t *testing.T) {
	seeds := []config.Member{
		{Address: "10.0.0.1:80"}, {Address: "127.0.0.1:8081"}, {Address: "[::ffff:127.0.0.1]:8081"},
		{Address: "169.254.169.254:80"}, {Address: "[fe80::1]:80"}, {Address: "0.0.0.0:80"}, {Address: "[::]:80"},
		{Address: "224.0.0.251:80"}, {Address: "svc.example:80"},
	}
	refusedNotLoopback := []wantErr{
		{P + ".members[3].address", `"169.254.169.254:80": 169.254.169.254 is a link-local address, which a member of a members_from: api pool may not be`},
		{P + ".members[4].address", `"[fe80::1]:80": fe80::1 is a link-local address`},
		{P + ".members[5].address", `"0.0.0.0:80": 0.0.0.0 is an unspecified address`},
		{P + ".members[6].address", `"[::]:80": :: is an unspecified address`},
		{P + ".members[7].address", `"224.0.0.251:80": 224.0.0.251 is a link-local address`},
	}
	refusedLoopback := []wantErr{
		{P + ".members[1].address", `"127.0.0.1:8081": 127.0.0.1 is a loopback address`},
		{P + ".members[2].address", `"[::ffff:127.0.0.1]:8081": ::ffff:127.0.0.1 is a loopback address`},
	}
	tests := []struct {
		name     string
		from     config.MembersFrom
		loopback bool
		want     []wantErr
	}{
		{"static", config.MembersStatic, false, nil},
		{"static by default", "", false, nil},
		{"api", config.MembersAPI, false, append(refusedLoopback, refusedNotLoopback...)},
		{"api with loopback allowed", config.MembersAPI, true, refusedNotLoopback},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			c.Server.Admin.AllowLoopbackMembers = tc.loopback
			pool(c).MembersFrom = tc.from
			pool(c).Members = seeds
			checkFieldErrors(t, c.Validate(), tc.want)
		})
	}
}
