package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"
)

// serve runs a TLS server on a loopback port that picks its certificate
// with store, and returns its address.
func serve(t *testing.T, store *Store) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: store.GetCertificate})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// loadIssued issues a certificate for dns from inter and loads it with
// the intermediate in its chain, as ramjetd would.
func loadIssued(t *testing.T, inter *testCA, cn string, dns ...string) *tls.Certificate {
	t.Helper()
	leaf := inter.issue(t, leafSpec{cn: cn, dns: dns, key: ecKeyA()})
	c, err := Load(certsPEM(leaf, inter.cert), sec1PEM(t, ecKeyA()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHandshakeSNI(t *testing.T) {
	root := newRootCA(t, "Test Root")
	inter := root.intermediate(t, "Test Intermediate")
	withDefault := NewStore(loadIssued(t, inter, "default", "default.test"))
	noDefault := NewStore(nil)
	for _, s := range []*Store{withDefault, noDefault} {
		for _, d := range []string{"a.example.com", "*.example.com"} {
			if err := s.Add(d, loadIssued(t, inter, d, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	addrDefault, addrNoDefault := serve(t, withDefault), serve(t, noDefault)
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)

	tests := []struct {
		name, addr, serverName string
		insecure               bool // the default certificate does not cover the name
		wantCN                 string
		wantErr                bool
	}{
		{name: "exact", addr: addrDefault, serverName: "a.example.com", wantCN: "a.example.com"},
		{name: "wildcard", addr: addrDefault, serverName: "b.example.com", wantCN: "*.example.com"},
		{name: "upper case", addr: addrDefault, serverName: "A.EXAMPLE.COM", wantCN: "a.example.com"},
		{name: "default", addr: addrDefault, serverName: "default.test", wantCN: "default"},
		{name: "two labels fall to default", addr: addrDefault, serverName: "x.b.example.com", insecure: true, wantCN: "default"},
		{name: "no SNI gets default", addr: addrDefault, insecure: true, wantCN: "default"},
		{name: "match without default", addr: addrNoDefault, serverName: "c.example.com", wantCN: "*.example.com"},
		{name: "no match and no default", addr: addrNoDefault, serverName: "other.test", insecure: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cn, err := handshake(tc.addr, &tls.Config{ServerName: tc.serverName, RootCAs: roots, InsecureSkipVerify: tc.insecure})
			if tc.wantErr {
				if err == nil {
					t.Fatalf("handshake got certificate %q, want an error", cn)
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake error = %v, want nil", err)
			}
			if cn != tc.wantCN {
				t.Errorf("server certificate CN = %q, want %q", cn, tc.wantCN)
			}
		})
	}
}

// handshake connects to addr with cfg and returns the common name of the
// certificate the server sent. With no ServerName, no SNI is sent (the
// address is an IP).
func handshake(addr string, cfg *tls.Config) (string, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	peers := conn.ConnectionState().PeerCertificates
	if len(peers) == 0 {
		return "", errors.New("no peer certificate")
	}
	return peers[0].Subject.CommonName, nil
}
