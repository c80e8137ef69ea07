package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Keys are costly to make (RSA above all), so the tests share a few.
var (
	rsaKeyA  = sync.OnceValue(func() crypto.Signer { return mustKey(rsa.GenerateKey(rand.Reader, 2048)) })
	rsaKeyB  = sync.OnceValue(func() crypto.Signer { return mustKey(rsa.GenerateKey(rand.Reader, 2048)) })
	ecKeyA   = sync.OnceValue(func() crypto.Signer { return mustKey(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)) })
	ecKeyB   = sync.OnceValue(func() crypto.Signer { return mustKey(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)) })
	ecKey384 = sync.OnceValue(func() crypto.Signer { return mustKey(ecdsa.GenerateKey(elliptic.P384(), rand.Reader)) })
	edKeyA   = sync.OnceValue(func() crypto.Signer {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return mustKey(k, err)
	})
)

func mustKey[K crypto.Signer](k K, err error) crypto.Signer {
	if err != nil {
		panic(err)
	}
	return k
}

// testCA is a throwaway certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// leafSpec describes a certificate for testCA.issue.
type leafSpec struct {
	cn        string
	dns       []string
	ips       []net.IP
	key       crypto.Signer
	notBefore time.Time
	notAfter  time.Time
}

func serial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// newRootCA makes a self-signed ECDSA root CA.
func newRootCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key := mustKey(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	tmpl := caTemplate(t, cn)
	return &testCA{cert: create(t, tmpl, tmpl, key.Public(), key), key: key}
}

// intermediate makes an ECDSA intermediate CA signed by ca.
func (ca *testCA) intermediate(t *testing.T, cn string) *testCA {
	t.Helper()
	key := mustKey(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	return &testCA{cert: create(t, caTemplate(t, cn), ca.cert, key.Public(), ca.key), key: key}
}

func caTemplate(t *testing.T, cn string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
}

// issue makes a server certificate signed by ca.
func (ca *testCA) issue(t *testing.T, s leafSpec) *x509.Certificate {
	t.Helper()
	if s.notBefore.IsZero() {
		s.notBefore = time.Now().Add(-time.Hour)
	}
	if s.notAfter.IsZero() {
		s.notAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: s.cn},
		DNSNames:     s.dns,
		IPAddresses:  s.ips,
		NotBefore:    s.notBefore,
		NotAfter:     s.notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	return create(t, tmpl, ca.cert, s.key.Public(), ca.key)
}

func create(t *testing.T, tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// certsPEM encodes certificates as PEM, in order.
func certsPEM(certs ...*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pkcs8PEM(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("PRIVATE KEY", der)
}

func pkcs1PEM(key crypto.Signer) []byte {
	return pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey)))
}

func sec1PEM(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("EC PRIVATE KEY", der)
}

func x25519PEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pkcs8PEM(t, k)
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

// checkNoKeyLines fails the test if err's message holds any line of the
// key PEMs given. Very short lines (a final "AQ==") are skipped: they
// could occur by chance and leak nothing.
func checkNoKeyLines(t *testing.T, err error, keyPEMs ...[]byte) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, k := range keyPEMs {
		for _, line := range strings.Split(string(k), "\n") {
			line = strings.TrimSpace(line)
			if len(line) >= 8 && strings.Contains(msg, line) {
				t.Errorf("error %q holds the key PEM line %q", msg, line)
			}
		}
	}
}
