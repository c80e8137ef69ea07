package listener_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/listener"
)

// testCert returns a self-signed ECDSA P-256 certificate for 127.0.0.1 and
// localhost, and a pool that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "listener test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// tlsListener listens on 127.0.0.1 with NewTLS.
func tlsListener(t *testing.T, opts listener.TLSOptions) (net.Listener, *x509.CertPool) {
	t.Helper()
	cert, pool := testCert(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	return listener.NewTLS(inner, cfg, opts), pool
}

func dialTLS(t *testing.T, addr string, pool *x509.CertPool) net.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func get(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func TestTLS(t *testing.T) {
	const timeout = 5 * time.Second
	cert, pool := testCert(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	l := listener.TLS(inner, cfg, timeout, listener.Limits{MaxHeadBytes: maxHeaderBytes + 4096})
	if got, want := l.Addr(), inner.Addr(); got != want {
		t.Errorf("Addr: got %v, want %v", got, want)
	}
	serve(t, l)
	addr := l.Addr().String()
	url := "https://" + addr + "/x"

	t.Run("http/2", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		if got, want := get(t, &http.Client{Transport: tr}, url), "GET /x 0 HTTP/2 tls=true"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("http/1.1 client", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		defer tr.CloseIdleConnections()
		if got, want := get(t, &http.Client{Transport: tr}, url), "GET /x 0 HTTP/1 tls=true"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("keep-alive pipelined", func(t *testing.T) {
		got := roundTrip(t, dialTLS(t, addr, pool), getA+postB+postC+getD, 0, 4)
		if len(got) != 4 {
			t.Fatalf("got %d responses %v, want 4", len(got), got)
		}
		for i, r := range got {
			want := strings.Replace(keepAliveWant[i], "tls=false", "tls=true", 1)
			if r.status != 200 || r.body != want {
				t.Errorf("response %d: got %v, want 200 %q", i, r, want)
			}
		}
	})
	t.Run("cl with te", func(t *testing.T) {
		got := roundTrip(t, dialTLS(t, addr, pool), smuggle, 0, 2)
		if len(got) != 1 || got[0].status != 400 {
			t.Errorf("got %v, want one 400", got)
		}
	})
	t.Run("plain http", func(t *testing.T) {
		c := dial(t, addr)
		c.SetDeadline(time.Now().Add(timeout))
		io.WriteString(c, getA)
		got, _ := io.ReadAll(c)
		if want := "HTTP/1.0 400 Bad Request\r\n"; !strings.HasPrefix(string(got), want) || !strings.Contains(string(got), "expects TLS") {
			t.Errorf("got %q, want a reply starting %q that mentions TLS", got, want)
		}
	})
	t.Run("silent client does not hold up others", func(t *testing.T) {
		dial(t, addr) // connects and says nothing
		start := time.Now()
		got := roundTrip(t, dialTLS(t, addr, pool), getA, 0, 1)
		if len(got) != 1 || got[0].status != 200 {
			t.Errorf("got %v, want one 200", got)
		}
		if d := time.Since(start); d > timeout/2 {
			t.Errorf("took %v, want well under the handshake timeout %v", d, timeout)
		}
	})
}

func TestTLSHandshakeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		send string
		want string
	}{
		{"silent client times out", "", "i/o timeout"},
		{"not tls", "\x16\x03\x01\x00\x05hello", "tls: "},
		{"plain http", getA, "client sent plain HTTP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := make(chan error, 1)
			l, _ := tlsListener(t, listener.TLSOptions{
				HandshakeTimeout: 200 * time.Millisecond,
				OnHandshakeError: func(err error) { errs <- err },
			})
			defer l.Close()
			c := dial(t, l.Addr().String())
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, tc.send)
			if _, err := io.ReadAll(c); err != nil {
				t.Errorf("reading until the server closes: got %v, want the end of the connection", err)
			}
			select {
			case err := <-errs:
				if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), c.LocalAddr().String()) {
					t.Errorf("got handshake error %q, want one mentioning %q and the client's address", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("got no handshake error, want one mentioning %q", tc.want)
			}
		})
	}
}

func TestTLSClose(t *testing.T) {
	t.Run("closes pending connections", func(t *testing.T) {
		l, pool := tlsListener(t, listener.TLSOptions{HandshakeTimeout: time.Minute})
		addr := l.Addr().String()
		handshaking := dial(t, addr)
		queued := dialTLS(t, addr, pool)
		time.Sleep(50 * time.Millisecond) // let the server finish the handshake
		if err := l.Close(); err != nil {
			t.Fatalf("Close: got %v, want nil", err)
		}
		if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: got %v, want net.ErrClosed", err)
		}
		for name, c := range map[string]net.Conn{"handshaking": handshaking, "queued": queued} {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("%s connection: read got %v, want it closed", name, err)
			}
		}
	})
	t.Run("ends a waiting Accept", func(t *testing.T) {
		l, _ := tlsListener(t, listener.TLSOptions{})
		errc := make(chan error, 1)
		go func() {
			_, err := l.Accept()
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond)
		l.Close()
		select {
		case err := <-errc:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("Accept: got %v, want net.ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Accept still waits after Close")
		}
	})
}
