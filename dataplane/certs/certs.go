// Package certs is the one certificate loader of Ramjet. ramjetd loads its
// listener and application certificates with it, and the controller checks
// TLS Secrets with the same functions, so the two cannot disagree about
// which certificates are valid.
//
// Private key contents never appear in an error: errors name the input (a
// file path, or a name such as "tls.key") and the problem, never the bytes.
package certs

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
)

// FakeCommonName is the common name of the default certificate ramjetd
// serves when no other certificate matches, like ingress-nginx's.
const FakeCommonName = "Ramjet Ingress Controller Fake Certificate"

// maxFileBytes bounds the size of a certificate, key or CA file.
const maxFileBytes = 4 << 20

// Load parses a PEM certificate chain (leaf first) and its PEM private key.
// Errors call the inputs "certificate PEM" and "key PEM".
func Load(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	return LoadNamed("certificate PEM", certPEM, "key PEM", keyPEM)
}

// LoadFiles reads a PEM certificate chain and its PEM private key from two
// files and parses them as Load does. Errors name the file paths.
func LoadFiles(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	return LoadNamed(certFile, certPEM, keyFile, keyPEM)
}

// LoadNamed parses a PEM certificate chain and its PEM private key as Load
// does, naming the inputs certName and keyName in errors (the controller
// passes "tls.crt" and "tls.key", the keys of a TLS Secret).
func LoadNamed(certName string, certPEM []byte, keyName string, keyPEM []byte) (*tls.Certificate, error) {
	chain, err := parseCertificates(certPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certName, err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyName, err)
	}
	if err := checkPair(chain[0], key); err != nil {
		return nil, fmt.Errorf("%s: %w (certificate in %s)", keyName, err, certName)
	}
	// crypto/tls has the last word on the pair; its errors are replaced,
	// not wrapped, so that nothing it might say about the key leaks.
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: the key and the certificate in %s are not a usable pair", keyName, certName)
	}
	cert.Leaf = chain[0]
	return &cert, nil
}

// checkPair reports whether key is the private key of leaf's public key.
func checkPair(leaf *x509.Certificate, key crypto.Signer) error {
	certAlg, keyAlg := algorithm(leaf.PublicKey), algorithm(key.Public())
	if certAlg != keyAlg {
		return fmt.Errorf("the key does not match the certificate: the key is %s, the certificate's is %s", keyAlg, certAlg)
	}
	pub, ok := leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(key.Public()) {
		return errMismatch
	}
	return nil
}

// ReadFile reads a PEM file (certificates, keys, CA bundles) of at most
// 4 MiB. Its errors name the path.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileBytes)
	}
	return data, nil
}
