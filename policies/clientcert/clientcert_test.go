package clientcert

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"hash/maphash"
	"net/url"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/certs/certstest"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TestCheck verifies client chains in every mode: valid, expired, from
// another authority, revoked, through too many intermediates, for the
// wrong usage, and none at all.
func TestCheck(t *testing.T) {
	root, other := certstest.NewCA(t, "root"), certstest.NewCA(t, "other")
	inter := root.Intermediate(t, "intermediate")
	deep := inter.Intermediate(t, "deeper")
	alice := pkix.Name{CommonName: "alice"}
	revoked := root.Issue(t, certstest.Client{Subject: alice})
	crl, _ := pem.Decode(root.CRL(t, revoked.Leaf))
	list, err := x509.ParseRevocationList(crl.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	chains := map[string]*tls.Certificate{
		"valid":          ptr(root.Issue(t, certstest.Client{Subject: alice})),
		"intermediate":   ptr(inter.Issue(t, certstest.Client{Subject: alice})),
		"too deep":       ptr(deep.Issue(t, certstest.Client{Subject: alice})),
		"expired":        ptr(root.Issue(t, certstest.Client{Subject: alice, NotAfter: time.Now().Add(-time.Minute)})),
		"other ca":       ptr(other.Issue(t, certstest.Client{Subject: alice})),
		"revoked":        &revoked,
		"server only":    ptr(root.Issue(t, certstest.Client{Subject: alice, ServerOnly: true})),
		"no certificate": nil,
	}
	tests := []struct {
		chain   string
		mode    config.VerifyClient
		verify  string
		refused bool
	}{
		{"valid", config.VerifyOn, "SUCCESS", false},
		{"intermediate", config.VerifyOn, "SUCCESS", false},
		{"too deep", config.VerifyOn, "FAILED:certificate chain too long", true},
		{"expired", config.VerifyOn, "FAILED:certificate has expired", true},
		{"other ca", config.VerifyOn, "FAILED:unable to get local issuer certificate", true},
		{"revoked", config.VerifyOn, "FAILED:certificate revoked", true},
		{"server only", config.VerifyOn, "FAILED:unsupported certificate purpose", true},
		{"no certificate", config.VerifyOn, "NONE", true},
		{"valid", config.VerifyOptional, "SUCCESS", false},
		{"other ca", config.VerifyOptional, "FAILED:unable to get local issuer certificate", true},
		{"no certificate", config.VerifyOptional, "NONE", false},
		{"other ca", config.VerifyOptionalNoCA, "FAILED:unable to get local issuer certificate", false},
		{"expired", config.VerifyOptionalNoCA, "FAILED:certificate has expired", true},
		{"revoked", config.VerifyOptionalNoCA, "FAILED:certificate revoked", true},
		{"no certificate", config.VerifyOptionalNoCA, "NONE", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+tt.chain, func(t *testing.T) {
			p := New(&config.ClientAuth{CAFile: "ca.crt", Verify: tt.mode}, []*x509.Certificate{root.Cert}, []*x509.RevocationList{list})
			got := p.check(connectionState(t, chains[tt.chain]), time.Now())
			if got.verify != tt.verify || got.refused != tt.refused {
				t.Errorf("got verify %q refused %v, want %q refused %v", got.verify, got.refused, tt.verify, tt.refused)
			}
		})
	}
}

// TestVerifyDepth proves that verify_depth counts the intermediates.
func TestVerifyDepth(t *testing.T) {
	root := certstest.NewCA(t, "root")
	two := root.Intermediate(t, "one").Intermediate(t, "two")
	chain := two.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "bob"}})
	tests := []struct {
		name   string
		depth  int
		verify string
	}{
		{"default of one", 0, "FAILED:certificate chain too long"},
		{"one", 1, "FAILED:certificate chain too long"},
		{"two", 2, "SUCCESS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(&config.ClientAuth{CAFile: "ca.crt", VerifyDepth: tt.depth}, []*x509.Certificate{root.Cert}, nil)
			if got := p.check(connectionState(t, &chain), time.Now()).verify; got != tt.verify {
				t.Errorf("got %q, want %q", got, tt.verify)
			}
		})
	}
}

// TestHeaders checks the DNs in RFC 2253 order and the escaped PEM, which
// URL decoding turns back into the certificate.
func TestHeaders(t *testing.T) {
	root := certstest.NewCA(t, "Root CA")
	chain := root.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "alice+admin", Organization: []string{"Example, Inc"}, Country: []string{"FR"}}})
	h := map[string][]string{}
	setHeaders(h, outcome{verify: verifySuccess, leaf: chain.Leaf}, true)
	want := map[string]string{
		HeaderVerify:    "SUCCESS",
		HeaderSubjectDN: `CN=alice\+admin,O=Example\, Inc,C=FR`,
		HeaderIssuerDN:  "CN=Root CA,O=Ramjet Tests",
	}
	for name, value := range want {
		if got := h[name]; len(got) != 1 || got[0] != value {
			t.Errorf("%s: got %q, want %q", name, got, value)
		}
	}
	decoded, err := url.PathUnescape(h[HeaderCert][0])
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(decoded))
	if block == nil || string(block.Bytes) != string(chain.Leaf.Raw) {
		t.Errorf("got %q, want the PEM of the client certificate", h[HeaderCert][0])
	}
}

// connectionState is what a handshake with chain (nil: none) leaves.
func connectionState(t *testing.T, chain *tls.Certificate) *tls.ConnectionState {
	t.Helper()
	state := &tls.ConnectionState{ServerName: "secure.test"}
	if chain == nil {
		return state
	}
	for _, der := range chain.Certificate {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		state.PeerCertificates = append(state.PeerCertificates, c)
	}
	return state
}

func ptr[T any](v T) *T { return &v }

// TestCheckRemembers: a chain that verified is not verified again on the
// next request of its connection, but no longer than its certificate is
// valid.
func TestCheckRemembers(t *testing.T) {
	root := certstest.NewCA(t, "root")
	now := time.Now()
	leaf := root.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "alice"}, NotAfter: now.Add(30 * time.Second)})
	p := New(&config.ClientAuth{CAFile: "ca.crt", Verify: config.VerifyOn}, []*x509.Certificate{root.Cert}, nil)
	state := connectionState(t, &leaf)
	for _, tc := range []struct {
		name   string
		at     time.Time
		verify string
	}{
		{"first request", now, "SUCCESS"},
		{"next request, remembered", now.Add(time.Second), "SUCCESS"},
		{"after the certificate expired", now.Add(31 * time.Second), "FAILED:certificate has expired"},
	} {
		if got := p.check(state, tc.at).verify; got != tc.verify {
			t.Errorf("%s: verify %q, want %q", tc.name, got, tc.verify)
		}
	}
	if s := p.verified[maphash.Bytes(p.seed, state.PeerCertificates[0].Signature)%verifiedSlots].Load(); s == nil || s.leaf != state.PeerCertificates[0] {
		t.Error("the verification was not remembered")
	}
}

// BenchmarkCheck is the cost a request of a kept-alive connection pays for
// its certificate: remembered, and verified anew (a new connection).
func BenchmarkCheck(b *testing.B) {
	root := certstest.NewCA(b, "root")
	inter := root.Intermediate(b, "intermediate")
	leaf := inter.Issue(b, certstest.Client{Subject: pkix.Name{CommonName: "alice"}})
	crl, _ := pem.Decode(root.CRL(b))
	list, err := x509.ParseRevocationList(crl.Bytes)
	if err != nil {
		b.Fatal(err)
	}
	p := New(&config.ClientAuth{CAFile: "ca.crt", Verify: config.VerifyOn}, []*x509.Certificate{root.Cert}, []*x509.RevocationList{list})
	state := &tls.ConnectionState{}
	for _, der := range leaf.Certificate {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			b.Fatal(err)
		}
		state.PeerCertificates = append(state.PeerCertificates, c)
	}
	b.Run("remembered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p.check(state, time.Now()).verify != verifySuccess {
				b.Fatal("not verified")
			}
		}
	})
	b.Run("new connection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if reason, _ := p.verify(state.PeerCertificates, time.Now()); reason != "" {
				b.Fatal(reason)
			}
		}
	})
}
