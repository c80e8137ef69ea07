package certs

import (
	"crypto/x509"
	"fmt"
)

// LoadCAPool parses a PEM bundle of CA certificates into a pool. Every block
// must be a certificate that parses, and there must be at least one. Errors
// call the input "CA bundle".
func LoadCAPool(pemData []byte) (*x509.CertPool, error) {
	return loadCAPool("CA bundle", pemData)
}

// LoadCAFile reads a PEM bundle of CA certificates from a file and parses it
// as LoadCAPool does. Errors name the file path.
func LoadCAFile(path string) (*x509.CertPool, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return loadCAPool(path, data)
}

// loadCAPool is LoadCAPool with the input's name for errors.
func loadCAPool(name string, pemData []byte) (*x509.CertPool, error) {
	cas, err := parseCertificates(pemData)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AddCert(ca)
	}
	return pool, nil
}
