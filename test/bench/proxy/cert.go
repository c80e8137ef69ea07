package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certFiles is the one certificate all three proxies serve: ECDSA P-256,
// self-signed for 127.0.0.1 and localhost.
type certFiles struct {
	cert, key string // PEM files; the key is 0600
	bundle    string // certificate then key, as HAProxy's crt wants it; 0600
	roots     *x509.CertPool
}

// writeCert generates the certificate and writes its files into dir.
func writeCert(dir string) (certFiles, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certFiles{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return certFiles{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "ramjet proxy benchmark"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(48 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return certFiles{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return certFiles{}, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return certFiles{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	f := certFiles{
		cert:   filepath.Join(dir, "cert.pem"),
		key:    filepath.Join(dir, "key.pem"),
		bundle: filepath.Join(dir, "bundle.pem"),
		roots:  x509.NewCertPool(),
	}
	f.roots.AddCert(leaf)
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{f.cert, certPEM, 0o644},
		{f.key, keyPEM, 0o600},
		{f.bundle, append(certPEM, keyPEM...), 0o600},
	} {
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return certFiles{}, err
		}
	}
	return f, nil
}
