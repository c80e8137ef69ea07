package certs

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/certs/certstest"
)

// TestLoadCRLFile loads revocation lists signed by the bundle's
// authorities and refuses the others, naming the file and the block.
func TestLoadCRLFile(t *testing.T) {
	root, other := certstest.NewCA(t, "root"), certstest.NewCA(t, "other")
	inter := root.Intermediate(t, "intermediate")
	issuers := []*x509.Certificate{root.Cert, inter.Cert}
	tests := []struct {
		name      string
		pem       []byte
		wantLists int
		wantErr   string
	}{
		{"one list", root.CRL(t), 1, ""},
		{"a list per authority", cat(root.CRL(t), inter.CRL(t)), 2, ""},
		{"signed by another authority", cat(root.CRL(t), other.CRL(t)), 0, "the CRL of PEM block 2 (issuer CN=other,O=Ramjet Tests) is not signed by a certificate of the CA bundle"},
		{"a certificate", root.PEM(), 0, `PEM block 1 is not a CRL (its type is "CERTIFICATE")`},
		{"garbage", pemBlock("X509 CRL", []byte("junk")), 0, "PEM block 1 is not a valid CRL"},
		{"not PEM", []byte("text"), 0, "no PEM data found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ca.crl")
			if err := os.WriteFile(path, tt.pem, 0o600); err != nil {
				t.Fatal(err)
			}
			lists, err := LoadCRLFile(path, issuers)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("got error %v, want one naming %s and holding %q", err, path, tt.wantErr)
				}
				return
			}
			if err != nil || len(lists) != tt.wantLists {
				t.Fatalf("got %d lists and error %v, want %d lists", len(lists), err, tt.wantLists)
			}
		})
	}
}
