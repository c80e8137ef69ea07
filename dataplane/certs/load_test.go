package certs

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loadFixture holds the certificates and keys of the Load tests.
type loadFixture struct {
	inter                          *testCA
	rsaLeaf, ecLeaf, edLeaf, old   []byte // leaf PEMs
	chain                          []byte // ecLeaf then the intermediate
	rsaKey, rsaKey8, ecKey, ecKey8 []byte
	edKey, otherRSA, otherEC       []byte
	p384Key, x25519                []byte
}

func newLoadFixture(t *testing.T) *loadFixture {
	t.Helper()
	root := newRootCA(t, "Test Root")
	inter := root.intermediate(t, "Test Intermediate")
	ecLeaf := inter.issue(t, leafSpec{cn: "ec.example.com", dns: []string{"ec.example.com"}, key: ecKeyA()})
	return &loadFixture{
		inter:    inter,
		rsaLeaf:  certsPEM(inter.issue(t, leafSpec{cn: "rsa.example.com", dns: []string{"rsa.example.com"}, key: rsaKeyA()})),
		ecLeaf:   certsPEM(ecLeaf),
		edLeaf:   certsPEM(inter.issue(t, leafSpec{cn: "ed.example.com", dns: []string{"ed.example.com"}, key: edKeyA()})),
		old:      certsPEM(inter.issue(t, leafSpec{cn: "old.example.com", key: ecKeyA(), notBefore: time.Now().AddDate(-2, 0, 0), notAfter: time.Now().AddDate(-1, 0, 0)})),
		chain:    certsPEM(ecLeaf, inter.cert),
		rsaKey:   pkcs1PEM(rsaKeyA()),
		rsaKey8:  pkcs8PEM(t, rsaKeyA()),
		ecKey:    sec1PEM(t, ecKeyA()),
		ecKey8:   pkcs8PEM(t, ecKeyA()),
		edKey:    pkcs8PEM(t, edKeyA()),
		otherRSA: pkcs1PEM(rsaKeyB()),
		otherEC:  sec1PEM(t, ecKeyB()),
		p384Key:  sec1PEM(t, ecKey384()),
		x25519:   x25519PEM(t),
	}
}

// allKeys lists every key PEM of the fixture, for checkNoKeyLines.
func (f *loadFixture) allKeys() [][]byte {
	return [][]byte{f.rsaKey, f.rsaKey8, f.ecKey, f.ecKey8, f.edKey, f.otherRSA, f.otherEC, f.p384Key, f.x25519}
}

func TestLoad(t *testing.T) {
	f := newLoadFixture(t)
	garbage := pemBlock("CERTIFICATE", []byte("this is not DER"))
	malformed := []byte("-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n")
	crlf := []byte(strings.ReplaceAll(string(f.chain), "\n", "\r\n"))
	spaced := cat([]byte("\n  \t\n"), f.ecLeaf, []byte("\n\n\t \r\n"), certsPEM(f.inter.cert), []byte("\n\n"))
	encrypted := pem.EncodeToMemory(&pem.Block{
		Type:    "RSA PRIVATE KEY",
		Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00112233445566778899AABBCCDDEEFF"},
		Bytes:   []byte("ciphertext"),
	})
	pkcs8AsPKCS1 := pemBlock("RSA PRIVATE KEY", mustDecode(t, f.rsaKey8))

	tests := []struct {
		name      string
		cert, key []byte
		wantErr   string // substring of the error; "" for success
		wantCN    string
		wantChain int
	}{
		{name: "RSA PKCS#1", cert: f.rsaLeaf, key: f.rsaKey, wantCN: "rsa.example.com", wantChain: 1},
		{name: "RSA PKCS#8", cert: f.rsaLeaf, key: f.rsaKey8, wantCN: "rsa.example.com", wantChain: 1},
		{name: "ECDSA SEC1", cert: f.ecLeaf, key: f.ecKey, wantCN: "ec.example.com", wantChain: 1},
		{name: "ECDSA PKCS#8", cert: f.ecLeaf, key: f.ecKey8, wantCN: "ec.example.com", wantChain: 1},
		{name: "Ed25519 PKCS#8", cert: f.edLeaf, key: f.edKey, wantCN: "ed.example.com", wantChain: 1},
		{name: "chain with intermediate", cert: f.chain, key: f.ecKey, wantCN: "ec.example.com", wantChain: 2},
		{name: "CRLF line ends", cert: crlf, key: f.ecKey, wantCN: "ec.example.com", wantChain: 2},
		{name: "whitespace around blocks", cert: spaced, key: cat([]byte("\n"), f.ecKey, []byte("\n\n")), wantCN: "ec.example.com", wantChain: 2},
		{name: "expired certificate loads", cert: f.old, key: f.ecKey, wantCN: "old.example.com", wantChain: 1},

		{name: "empty certificate", cert: nil, key: f.ecKey, wantErr: "certificate PEM: no PEM data found"},
		{name: "whitespace-only certificate", cert: []byte(" \n\t\n"), key: f.ecKey, wantErr: "certificate PEM: no PEM data found"},
		{name: "empty key", cert: f.ecLeaf, key: nil, wantErr: "key PEM: no PEM data found"},
		{name: "DER certificate", cert: mustDecode(t, f.ecLeaf), key: f.ecKey, wantErr: "certificate PEM: no PEM data found"},
		{name: "second block garbage", cert: cat(f.ecLeaf, garbage), key: f.ecKey, wantErr: "certificate PEM: PEM block 2 is not a valid certificate"},
		{name: "second block malformed", cert: cat(f.ecLeaf, malformed), key: f.ecKey, wantErr: "certificate PEM: PEM block 2 is malformed"},
		{name: "malformed block before a good one", cert: cat(malformed, f.ecLeaf), key: f.ecKey, wantErr: "certificate PEM: PEM block 1 is malformed"},
		{name: "private key in certificate file", cert: cat(f.ecLeaf, f.ecKey8), key: f.ecKey, wantErr: `certificate PEM: PEM block 2 is not a certificate (its type is "PRIVATE KEY")`},
		{name: "key as certificate", cert: f.ecKey, key: f.ecKey, wantErr: `certificate PEM: PEM block 1 is not a certificate (its type is "EC PRIVATE KEY")`},
		{name: "trailing garbage", cert: cat(f.chain, []byte("garbage\n")), key: f.ecKey, wantErr: "certificate PEM: data after PEM block 2 is not PEM"},
		{name: "leading garbage", cert: cat([]byte("Bag Attributes\n"), f.ecLeaf), key: f.ecKey, wantErr: "certificate PEM: data before PEM block 1 is not PEM"},

		{name: "key does not match", cert: f.ecLeaf, key: f.otherEC, wantErr: "key PEM: the key does not match the certificate"},
		{name: "RSA key does not match", cert: f.rsaLeaf, key: f.otherRSA, wantErr: "key PEM: the key does not match the certificate"},
		{name: "key of another type", cert: f.rsaLeaf, key: f.ecKey, wantErr: "the key does not match the certificate: the key is ECDSA P-256, the certificate's is RSA"},
		{name: "key of another curve", cert: f.ecLeaf, key: f.p384Key, wantErr: "the key is ECDSA P-384, the certificate's is ECDSA P-256"},
		{name: "certificate in key file", cert: f.ecLeaf, key: f.ecLeaf, wantErr: `key PEM: the PEM block is not a private key (its type is "CERTIFICATE")`},
		{name: "two keys", cert: f.ecLeaf, key: cat(f.ecKey, f.ecKey8), wantErr: "key PEM: holds 2 PEM blocks, want exactly one private key"},
		{name: "EC parameters before the key", cert: f.ecLeaf, key: cat(ecParameters, f.ecKey), wantCN: "ec.example.com", wantChain: 1},
		{name: "EC parameters after the key", cert: f.ecLeaf, key: cat(f.ecKey, ecParameters), wantErr: "key PEM: holds 2 PEM blocks, want exactly one private key"},
		{name: "key and certificate in key file", cert: f.ecLeaf, key: cat(f.ecKey, f.ecLeaf), wantErr: "key PEM: holds 2 PEM blocks"},
		{name: "key trailing garbage", cert: f.ecLeaf, key: cat(f.ecKey, []byte("junk")), wantErr: "key PEM: data after PEM block 1 is not PEM"},
		{name: "key malformed", cert: f.ecLeaf, key: malformedKey(f.ecKey), wantErr: "key PEM: PEM block 1 is malformed"},
		{name: "encrypted key", cert: f.rsaLeaf, key: encrypted, wantErr: "key PEM: the private key is encrypted"},
		{name: "PKCS#8 encrypted key", cert: f.rsaLeaf, key: pemBlock("ENCRYPTED PRIVATE KEY", []byte("x")), wantErr: "key PEM: the private key is encrypted"},
		{name: "PKCS#8 under a PKCS#1 label", cert: f.rsaLeaf, key: pkcs8AsPKCS1, wantErr: `key PEM: the "RSA PRIVATE KEY" PEM block is not a valid PKCS#1 RSA private key`},
		{name: "X25519 key", cert: f.ecLeaf, key: f.x25519, wantErr: "key PEM: the private key is of an unsupported type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(tc.cert, tc.key)
			checkNoKeyLines(t, err, f.allKeys()...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load() error = %v, want an error holding %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load() error = %v, want nil", err)
			}
			checkLoaded(t, got, tc.wantCN, tc.wantChain)
		})
	}
}

// checkLoaded checks a certificate Load returned.
func checkLoaded(t *testing.T, got *tls.Certificate, wantCN string, wantChain int) {
	t.Helper()
	if got.Leaf == nil {
		t.Fatal("Leaf is nil, want the parsed leaf")
	}
	if cn := got.Leaf.Subject.CommonName; cn != wantCN {
		t.Errorf("Leaf CN = %q, want %q", cn, wantCN)
	}
	if n := len(got.Certificate); n != wantChain {
		t.Errorf("chain length = %d, want %d", n, wantChain)
	}
	switch got.PrivateKey.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
	default:
		t.Errorf("PrivateKey is %T, want an RSA, ECDSA or Ed25519 key", got.PrivateKey)
	}
}

func mustDecode(t *testing.T, data []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM block")
	}
	return b.Bytes
}

// malformedKey breaks the base64 of a key PEM in its middle, keeping the
// rest of the key text.
func malformedKey(keyPEM []byte) []byte {
	lines := strings.Split(string(keyPEM), "\n")
	lines[1] = "!" + lines[1]
	return []byte(strings.Join(lines, "\n"))
}

func TestLoadNamed(t *testing.T) {
	f := newLoadFixture(t)
	tests := []struct {
		name      string
		cert, key []byte
		want      string
	}{
		{"bad certificate block", cat(f.ecLeaf, f.ecKey8), f.ecKey, `tls.crt: PEM block 2 is not a certificate (its type is "PRIVATE KEY")`},
		{"bad key", f.ecLeaf, f.ecLeaf, `tls.key: the PEM block is not a private key (its type is "CERTIFICATE")`},
		{"mismatch", f.ecLeaf, f.otherEC, "tls.key: the key does not match the certificate (certificate in tls.crt)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadNamed("tls.crt", tc.cert, "tls.key", tc.key)
			checkNoKeyLines(t, err, f.allKeys()...)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("LoadNamed() error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLoadFiles(t *testing.T) {
	f := newLoadFixture(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	goodCert, goodKey := write("tls.crt", f.chain), write("tls.key", f.ecKey)
	badCert, badKey := write("bad.crt", cat(f.ecLeaf, []byte("x"))), write("bad.key", f.otherEC)
	missing := filepath.Join(dir, "missing.pem")

	tests := []struct {
		name, cert, key string
		wantErr         string // prefix of the error; "" for success
	}{
		{name: "good", cert: goodCert, key: goodKey},
		{name: "missing certificate file", cert: missing, key: goodKey, wantErr: "open " + missing},
		{name: "missing key file", cert: goodCert, key: missing, wantErr: "open " + missing},
		{name: "bad certificate file", cert: badCert, key: goodKey, wantErr: badCert + ": data after PEM block 1 is not PEM"},
		{name: "key does not match", cert: goodCert, key: badKey, wantErr: badKey + ": the key does not match the certificate (certificate in " + goodCert + ")"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadFiles(tc.cert, tc.key)
			checkNoKeyLines(t, err, f.allKeys()...)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("LoadFiles() error = %v, want an error starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadFiles() error = %v, want nil", err)
			}
			checkLoaded(t, got, "ec.example.com", 2)
		})
	}
}

// ecParameters is the block `openssl ecparam -name prime256v1 -genkey`
// writes before the key: the curve's OID.
var ecParameters = []byte("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n")
