package certs

import (
	"crypto/x509"
	"fmt"
)

// LoadCACertificatesFile reads a PEM bundle of CA certificates from a file:
// every block must be a certificate that parses, and there must be at least
// one. Errors name the file path.
func LoadCACertificatesFile(path string) ([]*x509.Certificate, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCACertificates(path, data)
}

// ParseCACertificates parses a PEM bundle of CA certificates held in
// memory, as LoadCACertificatesFile does; errors start with name and never
// quote the data.
func ParseCACertificates(name string, data []byte) ([]*x509.Certificate, error) {
	cas, err := parseCertificates(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cas, nil
}

// LoadCRLFile reads a PEM file of certificate revocation lists ("X509 CRL"
// blocks, at least one), each of which must be signed by one of issuers.
// Errors name the file path and the block.
func LoadCRLFile(path string, issuers []*x509.Certificate) ([]*x509.RevocationList, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCRLs(path, data, issuers)
}

// ParseCRLs parses revocation lists held in memory, as LoadCRLFile does;
// errors start with name and never quote the data.
func ParseCRLs(name string, data []byte, issuers []*x509.Certificate) ([]*x509.RevocationList, error) {
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	lists := make([]*x509.RevocationList, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "X509 CRL" {
			return nil, fmt.Errorf("%s: PEM block %d is not a CRL (its type is %s)", name, i+1, quoteType(b.Type))
		}
		crl, err := x509.ParseRevocationList(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: PEM block %d is not a valid CRL: %w", name, i+1, err)
		}
		if signer(crl, issuers) == nil {
			return nil, fmt.Errorf("%s: the CRL of PEM block %d (issuer %s) is not signed by a certificate of the CA bundle", name, i+1, crl.Issuer)
		}
		lists = append(lists, crl)
	}
	return lists, nil
}

// signer returns the certificate of issuers that signed crl, or nil.
func signer(crl *x509.RevocationList, issuers []*x509.Certificate) *x509.Certificate {
	for _, ca := range issuers {
		if crl.CheckSignatureFrom(ca) == nil {
			return ca
		}
	}
	return nil
}
