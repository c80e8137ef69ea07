package certs

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
)

func TestCovers(t *testing.T) {
	ca := newRootCA(t, "Test Root")
	tlsCert := func(spec leafSpec, withLeaf bool) *tls.Certificate {
		spec.key = ecKeyA()
		leaf := ca.issue(t, spec)
		c := &tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: ecKeyA()}
		if withLeaf {
			c.Leaf = leaf
		}
		return c
	}
	site := tlsCert(leafSpec{
		cn:  "cn.example.com",
		dns: []string{"www.example.com", "*.apps.example.com", "Upper.Example.com"},
		ips: []net.IP{net.ParseIP("10.0.0.1")},
	}, true)
	noLeaf := tlsCert(leafSpec{dns: []string{"www.example.com"}}, false)
	cnOnly := tlsCert(leafSpec{cn: "cn.example.com"}, true)
	deepSAN := tlsCert(leafSpec{dns: []string{"**.example.com"}}, true)

	tests := []struct {
		name    string
		cert    *tls.Certificate
		domain  string
		wantErr string // substring of the error; "" when covered
	}{
		{name: "exact", cert: site, domain: "www.example.com"},
		{name: "exact, other case and trailing dot", cert: site, domain: "WWW.Example.COM."},
		{name: "SAN in upper case", cert: site, domain: "upper.example.com"},
		{name: "wildcard SAN covers one label", cert: site, domain: "a.apps.example.com"},
		{name: "wildcard SAN does not cover two labels", cert: site, domain: "a.b.apps.example.com", wantErr: "does not cover a.b.apps.example.com"},
		{name: "wildcard SAN does not cover its parent", cert: site, domain: "apps.example.com", wantErr: "does not cover"},
		{name: "wildcard domain with its wildcard SAN", cert: site, domain: "*.apps.example.com"},
		{name: "wildcard domain needs the wildcard SAN", cert: site, domain: "*.example.com", wantErr: "does not cover *.example.com"},
		{name: "wildcard domain not covered by a deeper wildcard", cert: site, domain: "*.x.apps.example.com", wantErr: "does not cover"},
		{name: "deep wildcard domain with the one-label wildcard SAN", cert: site, domain: "**.apps.example.com"},
		{name: "deep wildcard domain, other case", cert: site, domain: "**.Apps.Example.com."},
		{name: "deep wildcard domain needs the wildcard SAN", cert: site, domain: "**.example.com", wantErr: "does not cover **.example.com"},
		{name: "deep wildcard domain not covered by an exact SAN", cert: site, domain: "**.www.example.com", wantErr: "does not cover"},
		{name: "deep wildcard domain not covered by a deeper wildcard", cert: site, domain: "**.x.apps.example.com", wantErr: "does not cover"},
		{name: "deep wildcard SAN is no SAN", cert: deepSAN, domain: "**.example.com", wantErr: "does not cover"},
		{name: "deep wildcard SAN covers no name", cert: deepSAN, domain: "a.b.example.com", wantErr: "does not cover"},
		{name: "other domain", cert: site, domain: "example.org", wantErr: "(its DNS names: www.example.com, *.apps.example.com, Upper.Example.com)"},
		{name: "IP SAN is not a domain", cert: site, domain: "10.0.0.1", wantErr: "10.0.0.1 is an IP address, not a domain"},
		{name: "IPv6 is not a domain", cert: site, domain: "::1", wantErr: "is an IP address"},
		{name: "common name does not count", cert: cnOnly, domain: "cn.example.com", wantErr: "(its DNS names: none)"},
		{name: "empty domain", cert: site, domain: "", wantErr: "the domain is empty"},
		{name: "leaf parsed when not set", cert: noLeaf, domain: "www.example.com"},
		{name: "nil certificate", cert: nil, domain: "www.example.com", wantErr: "no certificate"},
		{name: "empty certificate", cert: &tls.Certificate{}, domain: "www.example.com", wantErr: "no certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Covers(tc.cert, tc.domain)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Covers(%q) = %v, want nil", tc.domain, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Covers(%q) = %v, want an error holding %q", tc.domain, err, tc.wantErr)
			}
		})
	}
}
