package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
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
	cert, err := certs.SelfSigned("ramjet proxy benchmark", "localhost", "127.0.0.1")
	if err != nil {
		return certFiles{}, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return certFiles{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	f := certFiles{
		cert:   filepath.Join(dir, "cert.pem"),
		key:    filepath.Join(dir, "key.pem"),
		bundle: filepath.Join(dir, "bundle.pem"),
		roots:  x509.NewCertPool(),
	}
	f.roots.AddCert(cert.Leaf)
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
