// Command democert makes the certificates of `make demo`: a demo
// certificate authority and a server certificate it signs for the demo host
// names, all with ECDSA P-256 keys.
//
//	democert --out DIR --hosts shop.demo.test,api.demo.test
//
// It writes into DIR (which must exist):
//
//	ca.crt     the demo CA, for clients: curl --cacert DIR/ca.crt
//	ca.key     its key (mode 0600)
//	demo.crt   the server certificate, for every host given
//	demo.key   its key (mode 0600)
//
// The certificates are valid for 30 days. They are for a demo on one's own
// machine: never trust this CA anywhere else.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const validity = 30 * 24 * time.Hour

func main() {
	out := flag.String("out", "", "folder to write ca.crt, ca.key, demo.crt and demo.key into (required)")
	hosts := flag.String("hosts", "", "comma-separated host names (or IP addresses) of the server certificate (required)")
	flag.Parse()
	if err := run(*out, *hosts); err != nil {
		fmt.Fprintln(os.Stderr, "democert:", err)
		os.Exit(1)
	}
}

func run(out, hostList string) error {
	if out == "" || hostList == "" {
		return errors.New("--out and --hosts are required")
	}
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; the flags are --out and --hosts", flag.Args())
	}
	var names []string
	var ips []net.IP
	for h := range strings.SplitSeq(hostList, ",") {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
		case net.ParseIP(h) != nil:
			ips = append(ips, net.ParseIP(h))
		default:
			names = append(names, strings.ToLower(h))
		}
	}
	if len(names)+len(ips) == 0 {
		return errors.New("--hosts names no host")
	}
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		return fmt.Errorf("--out %s is not a folder", out)
	}

	notBefore := time.Now().Add(-time.Hour)
	notAfter := notBefore.Add(validity)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Ramjet Demo CA", Organization: []string{"Ramjet demo"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return fmt.Errorf("creating the CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	commonName := hostList
	if len(names) > 0 {
		commonName = names[0]
	}
	leafTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"Ramjet demo"}},
		DNSNames:              names,
		IPAddresses:           ips,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTemplate, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("creating the server certificate: %w", err)
	}

	files := []struct {
		name, pemType string
		der           []byte
		mode          os.FileMode
	}{
		{"ca.crt", "CERTIFICATE", caDER, 0o644},
		{"ca.key", "PRIVATE KEY", mustPKCS8(caKey), 0o600},
		{"demo.crt", "CERTIFICATE", leafDER, 0o644},
		{"demo.key", "PRIVATE KEY", mustPKCS8(key), 0o600},
	}
	for _, f := range files {
		path := filepath.Join(out, f.name)
		if err := writePEM(path, f.pemType, f.der, f.mode); err != nil {
			return err
		}
	}
	fmt.Printf("democert: wrote ca.crt, ca.key, demo.crt and demo.key into %s for %s\n", out, strings.Join(slices.Concat(names, ipStrings(ips)), ", "))
	return nil
}

// serial returns a random 128-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return n
}

func mustPKCS8(key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return der
}

// writePEM writes one PEM block to path with mode, also when the file
// already exists with another mode.
func writePEM(path, pemType string, der []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := pem.Encode(f, &pem.Block{Type: pemType, Bytes: der}); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}
