// Package testpki writes the certificate files an echo pod gets mounted in
// the conformance manifests (server chain, key, client authorities), made
// by a fresh test authority, for the echo server's tests.
package testpki

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// Files are the paths of a server certificate, its key and the client
// authority file, and what a client needs to check and satisfy them.
type Files struct {
	Cert, Key, ClientCA string
	// CA is the authority that issued the server and client certificates.
	CA *harness.CA
	// Client is a client certificate issued by CA; ClientPEM its PEM.
	Client    tls.Certificate
	ClientPEM string
}

// Write issues a server certificate for hosts and a client certificate,
// and writes the server's files into a temporary folder of t.
func Write(t testing.TB, hosts ...string) Files {
	t.Helper()
	ca, err := harness.NewCA("echo test authority")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	clientPEM, clientKey, err := ca.IssueClient("echo test client")
	if err != nil {
		t.Fatal(err)
	}
	client, err := tls.X509KeyPair(clientPEM, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := Files{
		Cert: filepath.Join(dir, "crt"), Key: filepath.Join(dir, "key"), ClientCA: filepath.Join(dir, "ca"),
		CA: ca, Client: client, ClientPEM: string(clientPEM),
	}
	for path, data := range map[string][]byte{f.Cert: certPEM, f.Key: keyPEM, f.ClientCA: ca.PEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}
