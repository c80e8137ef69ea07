package sourcerange_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	p         = registry.Prefix
	allowlist = p + "allowlist-source-range"
	whitelist = p + "whitelist-source-range"
	denylist  = p + "denylist-source-range"
)

func TestApply(t *testing.T) {
	list := func(n int, entry string) string { return strings.TrimSuffix(strings.Repeat(entry+",", n), ",") }
	tests := []struct {
		name        string
		spec        string
		annotations map[string]string
		refused     bool
		allow, deny []string // not checked when refused
		findings    []string // substrings of the findings, in order
	}{
		{"IPv4 CIDRs, spaces trimmed", "all", map[string]string{allowlist: " 10.0.0.0/8 , 192.168.1.0/24"}, false,
			[]string{"10.0.0.0/8", "192.168.1.0/24"}, nil, nil},
		{"IPv6 and bare addresses", "all", map[string]string{allowlist: "2001:db8::/32, 203.0.113.7, ::1, ::ffff:10.0.0.0/104"}, false,
			[]string{"2001:db8::/32", "203.0.113.7", "::1", "::ffff:10.0.0.0/104"}, nil, nil},
		{"host bits are masked by the data plane, not refused", "all", map[string]string{allowlist: "10.1.2.3/8"}, false,
			[]string{"10.1.2.3/8"}, nil, nil},
		{"empty entries skipped", "all", map[string]string{allowlist: "10.0.0.0/8,,192.0.2.1,"}, false,
			[]string{"10.0.0.0/8", "192.0.2.1"}, nil, nil},
		{"whitelist alone", "all", map[string]string{whitelist: "10.0.0.0/8"}, false, []string{"10.0.0.0/8"}, nil, nil},
		{"allowlist beats whitelist", "all", map[string]string{allowlist: "10.0.0.0/8", whitelist: "192.0.2.0/24"}, false,
			[]string{"10.0.0.0/8"}, nil, nil},
		{"empty allowlist falls back to whitelist, as ingress-nginx's alias", "all", map[string]string{allowlist: " ", whitelist: "192.0.2.0/24"}, false,
			[]string{"192.0.2.0/24"}, nil, nil},
		{"deny list", "all", map[string]string{denylist: "10.9.0.0/16"}, false, nil, []string{"10.9.0.0/16"}, nil},
		{"both lists", "all", map[string]string{allowlist: "10.0.0.0/8", denylist: "10.9.0.0/16, 2001:db8::1"}, false,
			[]string{"10.0.0.0/8"}, []string{"10.9.0.0/16", "2001:db8::1"}, nil},
		{"1024 entries", "all", map[string]string{allowlist: list(1024, "::")}, false, slices.Repeat([]string{"::"}, 1024), nil, nil},
		{"1025 entries refuse the object", "all", map[string]string{allowlist: list(1025, "::")}, true, nil, nil,
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/allowlist-source-range: 1025 entries, more than 1024; the object is not served`}},
		{"invalid entry refuses the object", "all", map[string]string{allowlist: "10.0.0.0/8, 10.0.0.300"}, true, nil, nil,
			[]string{`nginx.ingress.kubernetes.io/allowlist-source-range: entry 2: "10.0.0.300" is neither an address nor a CIDR; the object is not served`}},
		{"invalid CIDR refuses the object", "all", map[string]string{denylist: "10.0.0.0/33"}, true, nil, nil,
			[]string{`denylist-source-range: entry 1: "10.0.0.0/33" is not a CIDR; the object is not served`}},
		{"a hostname is no entry", "all", map[string]string{allowlist: "office.example.com"}, true, nil, nil,
			[]string{`entry 1: "office.example.com" is neither an address nor a CIDR`}},
		{"invalid whitelist refuses even beside a valid allowlist", "all", map[string]string{allowlist: "10.0.0.0/8", whitelist: "nope"}, true, nil, nil,
			[]string{`whitelist-source-range: entry 1: "nope" is neither an address nor a CIDR; the object is not served`}},
		{"empty allowlist refuses the object", "all", map[string]string{allowlist: " , "}, true, nil, nil,
			[]string{`nginx.ingress.kubernetes.io/allowlist-source-range: the list is empty; write at least one CIDR or address; the object is not served`}},
		{"empty allowlist and whitelist", "all", map[string]string{allowlist: "", whitelist: ""}, true, nil, nil,
			[]string{`whitelist-source-range: the list is empty`}},
		{"empty allowlist beside an invalid whitelist: one finding", "all", map[string]string{allowlist: "", whitelist: "nope"}, true, nil, nil,
			[]string{`whitelist-source-range: entry 1: "nope" is neither an address nor a CIDR; the object is not served`}},
		{"empty deny list refuses the object", "all", map[string]string{allowlist: "10.0.0.0/8", denylist: ""}, true, nil, nil,
			[]string{`denylist-source-range: the list is empty`}},
		{"a YAML block, one entry per line", "all", map[string]string{whitelist: "10.0.0.0/8,\n172.16.0.0/16,\n192.168.0.0/16\n"}, false,
			[]string{"10.0.0.0/8", "172.16.0.0/16", "192.168.0.0/16"}, nil, nil},
		{"line breaks and spaces around every entry", "all", map[string]string{allowlist: "\r\n  10.0.0.0/8 ,\r\n\t2001:db8::/32\r\n", denylist: "10.9.0.0/16\n"}, false,
			[]string{"10.0.0.0/8", "2001:db8::/32"}, []string{"10.9.0.0/16"}, nil},
		{"entries separated by line breaks alone refuse the object", "all", map[string]string{allowlist: "10.0.0.0/8\n192.168.0.0/16\n"}, true, nil, nil,
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/allowlist-source-range: entry 1 holds a line break: separate the entries with commas (line breaks may only surround them); the object is not served`}},
		{"a line break in the second entry", "all", map[string]string{denylist: "10.0.0.0/8, 10.1.0.0/16\n10.2.0.0/16"}, true, nil, nil,
			[]string{`denylist-source-range: entry 2 holds a line break`}},
		{"another control character refuses the object", "all", map[string]string{allowlist: "10.0.0.0/8,\x00\n192.168.0.0/16"}, true, nil, nil,
			[]string{`allowlist-source-range: the value holds control characters; the object is not served`}},
		{"disabled family: not served", "all,-source-range", map[string]string{denylist: "10.0.0.0/8"}, true, nil, nil,
			[]string{`UnsupportedAccessControl: nginx.ingress.kubernetes.io/denylist-source-range belongs to the access-control family source-range, which is disabled (--annotations); the object is not served`}},
	}
	origin := core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := registry.Select(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			out := registry.Apply(sel, origin, tc.annotations, nil)
			if out.Refused != tc.refused {
				t.Errorf("refused %t, want %t", out.Refused, tc.refused)
			}
			if len(out.Findings) != len(tc.findings) {
				t.Errorf("%d findings, want %d: %v", len(out.Findings), len(tc.findings), out.Findings)
			}
			for i, f := range out.Findings {
				if line := string(f.Reason) + ": " + f.Message; i < len(tc.findings) && !strings.Contains(line, tc.findings[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, line, tc.findings[i])
				}
			}
			if out.Refused {
				return
			}
			pol := out.Settings.Policies
			if !slices.Equal(pol.Allow, tc.allow) || !slices.Equal(pol.Deny, tc.deny) {
				t.Errorf("allow %v deny %v, want %v and %v", pol.Allow, pol.Deny, tc.allow, tc.deny)
			}
			if want := len(tc.allow)+len(tc.deny) > 0; out.Settings.Protected != want {
				t.Errorf("protected %t, want %t", out.Settings.Protected, want)
			}
		})
	}
}
