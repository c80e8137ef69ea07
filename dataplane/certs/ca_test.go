package certs

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadCAPool(t *testing.T) {
	rootA, rootB := newRootCA(t, "Root A"), newRootCA(t, "Root B")
	leafA := rootA.issue(t, leafSpec{cn: "a", dns: []string{"a.example.com"}, key: ecKeyA()})
	leafB := rootB.issue(t, leafSpec{cn: "b", dns: []string{"b.example.com"}, key: ecKeyA()})
	stranger := newRootCA(t, "Stranger").issue(t, leafSpec{cn: "s", dns: []string{"s.example.com"}, key: ecKeyA()})
	bundle := certsPEM(rootA.cert, rootB.cert)

	tests := []struct {
		name    string
		pem     []byte
		wantErr string
	}{
		{name: "two CAs", pem: bundle},
		{name: "empty", pem: nil, wantErr: "CA bundle: no PEM data found"},
		{name: "garbage block", pem: cat(bundle, pemBlock("CERTIFICATE", []byte("junk"))), wantErr: "CA bundle: PEM block 3 is not a valid certificate"},
		{name: "wrong type", pem: cat(pemBlock("X509 CRL", []byte("crl")), bundle), wantErr: `CA bundle: PEM block 1 is not a certificate (its type is "X509 CRL")`},
		{name: "trailing text", pem: cat(bundle, []byte("text")), wantErr: "CA bundle: data after PEM block 2 is not PEM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := LoadCAPool(tc.pem)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadCAPool() error = %v, want an error holding %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadCAPool() error = %v, want nil", err)
			}
			checkVerifies(t, pool, leafA, true)
			checkVerifies(t, pool, leafB, true)
			checkVerifies(t, pool, stranger, false)
		})
	}
}

// checkVerifies checks whether leaf verifies against pool.
func checkVerifies(t *testing.T, pool *x509.CertPool, leaf *x509.Certificate, want bool) {
	t.Helper()
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool})
	if got := err == nil; got != want {
		t.Errorf("verifying %q: ok = %v (error %v), want %v", leaf.Subject.CommonName, got, err, want)
	}
}

func TestLoadCAFile(t *testing.T) {
	root := newRootCA(t, "Root")
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "bad.crt")
	if err := os.WriteFile(good, certsPEM(root.cert), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.crt")
	tests := []struct{ name, path, wantErr string }{
		{name: "good", path: good},
		{name: "bad", path: bad, wantErr: bad + ": no PEM data found"},
		{name: "missing", path: missing, wantErr: "open " + missing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := LoadCAFile(tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("LoadCAFile() error = %v, want an error starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || pool == nil {
				t.Fatalf("LoadCAFile() = %v, %v, want a pool, nil", pool, err)
			}
		})
	}
}
