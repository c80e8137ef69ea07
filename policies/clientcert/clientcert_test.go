package clientcert

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
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
