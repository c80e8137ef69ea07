// Package certstest makes certificate authorities, client certificates and
// revocation lists for tests of client certificate authentication.
package certstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"sync/atomic"
	"testing"
	"time"
)

// serials makes every certificate's serial number unique.
var serials atomic.Int64

// CA is a certificate authority: a root, or an intermediate with the chain
// above it.
type CA struct {
	// Cert is the authority's certificate.
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// chain is the intermediates from this one up, roots excluded.
	chain []*x509.Certificate
}

// NewCA returns a root authority named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	cert := create(t, caTemplate(name), nil, &key.PublicKey, key)
	return &CA{Cert: cert, key: key}
}

// Intermediate returns an authority issued by ca.
func (ca *CA) Intermediate(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	cert := create(t, caTemplate(name), ca, &key.PublicKey, ca.key)
	return &CA{Cert: cert, key: key, chain: append([]*x509.Certificate{cert}, ca.chain...)}
}

// PEM is the authority's certificate in PEM.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// Client is a client certificate to issue.
type Client struct {
	// Subject is the certificate's subject.
	Subject pkix.Name
	// NotAfter defaults to an hour from now.
	NotAfter time.Time
	// ServerOnly gives the certificate the server-auth usage only.
	ServerOnly bool
}

// Issue returns the client certificate c with its key and ca's chain, as a
// client presents it.
func (ca *CA) Issue(t testing.TB, c Client) tls.Certificate {
	t.Helper()
	if c.NotAfter.IsZero() {
		c.NotAfter = time.Now().Add(time.Hour)
	}
	usage := x509.ExtKeyUsageClientAuth
	if c.ServerOnly {
		usage = x509.ExtKeyUsageServerAuth
	}
	key := newKey(t)
	leaf := create(t, &x509.Certificate{
		Subject:     c.Subject,
		NotBefore:   c.NotAfter.Add(-2 * time.Hour),
		NotAfter:    c.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}, ca, &key.PublicKey, ca.key)
	out := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, c := range ca.chain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out
}

// CRL returns a PEM revocation list of ca revoking certs.
func (ca *CA) CRL(t testing.TB, certs ...*x509.Certificate) []byte {
	t.Helper()
	tmpl := &x509.RevocationList{
		Number:     big.NewInt(serials.Add(1)),
		ThisUpdate: time.Now().Add(-time.Hour),
		NextUpdate: time.Now().Add(time.Hour),
	}
	for _, c := range certs {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: c.SerialNumber, RevocationTime: time.Now().Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

func caTemplate(name string) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Ramjet Tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
}

// create signs tmpl with the issuer's key (parent nil: self-signed).
func create(t testing.TB, tmpl *x509.Certificate, parent *CA, pub, signer any) *x509.Certificate {
	t.Helper()
	tmpl.SerialNumber = big.NewInt(serials.Add(1))
	issuer := tmpl
	if parent != nil {
		issuer = parent.Cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
