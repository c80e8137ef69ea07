package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Covers reports whether the leaf of cert is valid for domain, going by
// its DNS subject alternative names only (the common name does not count).
// domain is an exact name ("www.example.com"), which a SAN of the same name
// or a wildcard SAN of one left-most label ("*.example.com") covers, or a
// wildcard domain ("*.example.com"), which only the SAN "*.example.com"
// itself covers, or a wildcard domain of one or more labels
// ("**.example.com"), which the SAN "*.example.com" covers too.
//
// A SAN "*.example.com" is valid for names of one label under example.com
// only (RFC 6125, section 6.4.3), and no SAN is valid for every deeper name:
// for "**.example.com" Covers checks what a certificate can cover, the
// names of one label, and a client that verifies a deeper name
// (a.b.example.com) refuses the certificate unless it names that one too
// (an exact SAN or "*.b.example.com"; Covers does not check those). Case
// and a trailing dot are ignored; an IP address is not a domain. Covers
// returns nil when the domain is covered and an error saying why not
// otherwise.
func Covers(cert *tls.Certificate, domain string) error {
	leaf, err := leafOf(cert)
	if err != nil {
		return err
	}
	name := canonical(domain)
	if name == "" {
		return errors.New("the domain is empty")
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return fmt.Errorf("%s is an IP address, not a domain", domain)
	}
	for _, san := range leaf.DNSNames {
		if sanCovers(canonical(san), name) {
			return nil
		}
	}
	return fmt.Errorf("the certificate does not cover %s (its DNS names: %s)", domain, dnsNames(leaf))
}

// sanCovers reports whether the canonical SAN san covers the canonical
// domain name.
func sanCovers(san, name string) bool {
	if parent, ok := deepParent(name); ok {
		sanParent, ok := wildcardParent(san)
		return ok && sanParent == parent
	}
	if san == name {
		return true
	}
	if strings.HasPrefix(name, "*.") {
		return false
	}
	sanParent, ok := wildcardParent(san)
	if !ok {
		return false
	}
	parent, ok := parentOf(name)
	return ok && parent == sanParent
}

// leafOf returns cert's parsed leaf, parsing it when Leaf is not set.
func leafOf(cert *tls.Certificate) (*x509.Certificate, error) {
	if cert == nil || len(cert.Certificate) == 0 {
		return nil, errors.New("no certificate")
	}
	if cert.Leaf != nil {
		return cert.Leaf, nil
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("the leaf certificate is not valid: %w", err)
	}
	return leaf, nil
}

// dnsNames lists a certificate's DNS names for an error message.
func dnsNames(leaf *x509.Certificate) string {
	if len(leaf.DNSNames) == 0 {
		return "none"
	}
	return strings.Join(leaf.DNSNames, ", ")
}
