package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// pemSpace is what may stand before, between and after PEM blocks.
const pemSpace = " \t\r\n"

var (
	beginMarker = []byte("-----BEGIN ")
	errNoPEM    = errors.New("no PEM data found")
	errMismatch = errors.New("the key does not match the certificate")
)

// pemBlocks splits data into PEM blocks. Only whitespace may stand before,
// between and after them; anything else is an error that says where it is
// but does not quote it.
func pemBlocks(data []byte) ([]*pem.Block, error) {
	var blocks []*pem.Block
	rest := data
	for {
		rest = bytes.TrimLeft(rest, pemSpace)
		if len(rest) == 0 {
			break
		}
		n := len(blocks) + 1
		if !bytes.HasPrefix(rest, beginMarker) {
			return nil, notPEMError(n, rest)
		}
		block, after := pem.Decode(rest)
		// pem.Decode skips a malformed block and returns the next good
		// one; a consumed region with two BEGIN lines means it did.
		if block == nil || bytes.Count(rest[:len(rest)-len(after)], beginMarker) != 1 {
			return nil, fmt.Errorf("PEM block %d is malformed", n)
		}
		blocks = append(blocks, block)
		rest = after
	}
	if len(blocks) == 0 {
		return nil, errNoPEM
	}
	return blocks, nil
}

// notPEMError describes non-PEM data met where PEM block n should start.
func notPEMError(n int, rest []byte) error {
	if n == 1 && !bytes.Contains(rest, beginMarker) {
		return errNoPEM
	}
	if n == 1 {
		return errors.New("data before PEM block 1 is not PEM")
	}
	return fmt.Errorf("data after PEM block %d is not PEM", n-1)
}

// parseCertificates parses a PEM bundle in which every block is a
// certificate. The result has at least one element.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, err
	}
	certs := make([]*x509.Certificate, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %d is not a certificate (its type is %s)", i+1, quoteType(b.Type))
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d is not a valid certificate: %w", i+1, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// parseKey parses a PEM private key: exactly one block of PKCS#1 RSA,
// PKCS#8 (RSA, ECDSA or Ed25519) or SEC1 EC, optionally after an
// "EC PARAMETERS" block as `openssl ecparam -genkey` writes it (nginx and
// Go's tls.X509KeyPair accept those files too). Its errors never include
// the key's bytes nor the parser's message about them.
func parseKey(data []byte) (crypto.Signer, error) {
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 2 && blocks[0].Type == "EC PARAMETERS" {
		blocks = blocks[1:]
	}
	if len(blocks) != 1 {
		return nil, fmt.Errorf("holds %d PEM blocks, want exactly one private key", len(blocks))
	}
	b := blocks[0]
	if strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") || b.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, errors.New("the private key is encrypted, which is not supported")
	}
	parse, format := keyParser(b.Type)
	if parse == nil {
		return nil, fmt.Errorf("the PEM block is not a private key (its type is %s)", quoteType(b.Type))
	}
	key, err := parse(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the %s PEM block is not a valid %s private key", quoteType(b.Type), format)
	}
	return supportedKey(key)
}

// keyParser returns the parser and format name of a private key PEM type,
// or nil when the type is not one of a private key.
func keyParser(pemType string) (func([]byte) (any, error), string) {
	switch pemType {
	case "RSA PRIVATE KEY":
		return func(der []byte) (any, error) { return x509.ParsePKCS1PrivateKey(der) }, "PKCS#1 RSA"
	case "PRIVATE KEY":
		return x509.ParsePKCS8PrivateKey, "PKCS#8"
	case "EC PRIVATE KEY":
		return func(der []byte) (any, error) { return x509.ParseECPrivateKey(der) }, "SEC1 EC"
	}
	return nil, ""
}

// supportedKey returns key as a crypto.Signer when it is an RSA, ECDSA or
// Ed25519 key.
func supportedKey(key any) (crypto.Signer, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("the private key is of an unsupported type (%T), want RSA, ECDSA or Ed25519", key)
}

// algorithm names the algorithm of a public key, with the curve for ECDSA.
func algorithm(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PublicKey:
		return "ECDSA " + k.Curve.Params().Name
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", pub)
}

// quoteType quotes a PEM block type for an error, cut to a sane length.
func quoteType(t string) string {
	const maxLen = 40
	if len(t) > maxLen {
		t = t[:maxLen] + "..."
	}
	return fmt.Sprintf("%q", t)
}
