// Package certs builds the echo server's TLS configuration from the PEM
// files that the conformance manifests mount into the pod, and describes a
// TLS connection the way echo-basic reports it.
package certs

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// Server returns a TLS configuration presenting the chain of certFile with
// the key of keyFile. With clientCAFile set, a client certificate is
// verified against the authorities of that file when the client sends one,
// and a client without one is still served (echo-basic's rule).
func Server(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS_SERVER_CERT and key: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile == "" {
		return c, nil
	}
	data, err := os.ReadFile(clientCAFile)
	if err != nil {
		return nil, fmt.Errorf("TLS_CLIENT_CACERTS: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("TLS_CLIENT_CACERTS: the file holds no PEM certificate")
	}
	c.ClientCAs, c.ClientAuth = pool, tls.VerifyClientCertIfGiven
	return c, nil
}

// VersionName names a TLS version as echo-basic's HTTP and gRPC answers do
// ("TLSv1.3"); an unknown version gives "".
func VersionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS10:
		return "TLSv1.0"
	}
	return ""
}

// PeerPEM returns the certificates the peer sent, in order, each as one PEM
// block.
func PeerPEM(s *tls.ConnectionState) []string {
	var out []string
	for _, c := range s.PeerCertificates {
		out = append(out, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})))
	}
	return out
}
