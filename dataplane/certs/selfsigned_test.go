package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"slices"
	"testing"
	"time"
)

func TestSelfSigned(t *testing.T) {
	tests := []struct {
		name string
		cn   string
		dns  []string
		ips  []string // given among the names, expected as IP SANs
	}{
		{name: "fake certificate", cn: FakeCommonName, dns: []string{"ingress.local"}},
		{name: "no DNS names", cn: "plain"},
		{name: "several DNS names", cn: "multi", dns: []string{"a.example.com", "*.example.com"}},
		{name: "an IP address", cn: "loopback", dns: []string{"localhost"}, ips: []string{"127.0.0.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			made, err := SelfSigned(tc.cn, append(slices.Clone(tc.dns), tc.ips...)...)
			if err != nil {
				t.Fatalf("SelfSigned() error = %v, want nil", err)
			}
			key, ok := made.PrivateKey.(*ecdsa.PrivateKey)
			if !ok || key.Curve != elliptic.P256() {
				t.Fatalf("PrivateKey = %T, want an ECDSA P-256 key", made.PrivateKey)
			}
			got, err := Load(certsPEM(made.Leaf), pkcs8PEM(t, key))
			if err != nil {
				t.Fatalf("Load(re-encoded) error = %v, want nil", err)
			}
			checkLoaded(t, got, tc.cn, 1)
			if !slices.Equal(got.Leaf.DNSNames, tc.dns) {
				t.Errorf("DNSNames = %q, want %q", got.Leaf.DNSNames, tc.dns)
			}
			var ips []string
			for _, ip := range got.Leaf.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tc.ips) {
				t.Errorf("IPAddresses = %q, want %q", ips, tc.ips)
			}
			checkValidity(t, got.Leaf.NotBefore, got.Leaf.NotAfter, start)
			for _, d := range tc.dns {
				if err := Covers(got, d); err != nil {
					t.Errorf("Covers(%q) = %v, want nil", d, err)
				}
			}
		})
	}
}

// checkValidity checks a validity of one year from an hour before start.
func checkValidity(t *testing.T, notBefore, notAfter, start time.Time) {
	t.Helper()
	wantBefore := start.Add(-time.Hour)
	if d := notBefore.Sub(wantBefore); d < -time.Second || d > time.Minute {
		t.Errorf("NotBefore = %v, want about %v", notBefore, wantBefore)
	}
	if want := notBefore.AddDate(1, 0, 0); !notAfter.Equal(want) {
		t.Errorf("NotAfter = %v, want %v", notAfter, want)
	}
}
