package upstream

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// clientCert is a client certificate written to files.
type clientCert struct {
	certFile, keyFile string
	der               []byte // the leaf
	keyPEM            []byte
}

// writeClientCert writes a new self-signed certificate and its PKCS#8 key
// into dir as name.crt and name.key.
func writeClientCert(t *testing.T, dir, name string) clientCert {
	t.Helper()
	c, err := certs.SelfSigned("client " + name)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	cc := clientCert{der: c.Certificate[0], keyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
	cc.certFile = writeCA(t, dir, name+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cc.der}))
	cc.keyFile = writeCA(t, dir, name+".key", cc.keyPEM)
	return cc
}

// withClientCert is an https pool trusting caFile that presents cc.
func withClientCert(scheme config.Scheme, caFile string, cc clientCert) *config.Pool {
	return &config.Pool{Scheme: scheme, TLS: &config.PoolTLS{CAFile: caFile, CertFile: cc.certFile, KeyFile: cc.keyFile}}
}

func TestBuildClientCertErrors(t *testing.T) {
	dir := t.TempDir()
	a, b := writeClientCert(t, dir, "a"), writeClientCert(t, dir, "b")
	garbage := writeCA(t, dir, "garbage.pem", []byte("not PEM\n"))
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		name       string
		cert, key  string
		wantPrefix string
		wantIn     string
	}{
		{name: "missing certificate", cert: missing, key: a.keyFile, wantPrefix: "tls.cert_file: ", wantIn: "no such file"},
		{name: "missing key", cert: a.certFile, key: missing, wantPrefix: "tls.key_file: ", wantIn: "no such file"},
		{name: "certificate not PEM", cert: garbage, key: a.keyFile, wantPrefix: "tls.cert_file: ", wantIn: "no PEM data found"},
		{name: "key not PEM", cert: a.certFile, key: garbage, wantPrefix: "tls.key_file: ", wantIn: "no PEM data found"},
		{name: "key of another certificate", cert: a.certFile, key: b.keyFile, wantPrefix: "tls.key_file: ", wantIn: "does not match"},
		{name: "files swapped", cert: a.keyFile, key: a.certFile, wantPrefix: "tls.cert_file: ", wantIn: "is not a certificate"},
		{name: "one file for both", cert: a.certFile, key: a.certFile, wantPrefix: "tls.cert_file and tls.key_file: ", wantIn: "not a private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState()
			p, err := s.Build("web", &config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CertFile: tt.cert, KeyFile: tt.key}})
			if err == nil {
				t.Fatalf("Build succeeded (pool %v), want an error", p)
			}
			if !strings.HasPrefix(err.Error(), tt.wantPrefix) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error = %q, want it to start with %q and contain %q", err, tt.wantPrefix, tt.wantIn)
			}
			for _, key := range [][]byte{a.keyPEM, b.keyPEM} {
				for line := range bytes.Lines(key) {
					if line = bytes.TrimSpace(line); !bytes.HasPrefix(line, []byte("-----")) && strings.Contains(err.Error(), string(line)) {
						t.Fatalf("error %q holds key material", err)
					}
				}
			}
			if len(s.transports) != 0 {
				t.Errorf("a failed Build left %d transports, want 0", len(s.transports))
			}
		})
	}
}

// TestTransportKeyedByClientCert checks that pools share a transport only
// when they present the same certificate, and that a certificate whose
// files changed content (a reload after rotation) gets a new transport.
func TestTransportKeyedByClientCert(t *testing.T) {
	dir := t.TempDir()
	ca := writeCA(t, dir, "ca.pem", selfSignedPEM(t))
	a, b := writeClientCert(t, dir, "a"), writeClientCert(t, dir, "b")
	aCopy := clientCert{certFile: writeCA(t, dir, "a-copy.crt", mustRead(t, a.certFile)), keyFile: writeCA(t, dir, "a-copy.key", a.keyPEM)}
	tests := []struct {
		name     string
		other    *config.Pool
		wantSame bool
	}{
		{name: "same files", other: withClientCert(config.SchemeHTTPS, ca, a), wantSame: true},
		{name: "same content in other files", other: withClientCert(config.SchemeHTTPS, ca, aCopy), wantSame: true},
		{name: "other certificate", other: withClientCert(config.SchemeHTTPS, ca, b)},
		{name: "no certificate", other: &config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: ca}}},
		{name: "same certificate on h2", other: withClientCert(config.SchemeH2, ca, a)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState()
			pa := mustBuild(t, s, "a", withClientCert(config.SchemeHTTPS, ca, a))
			pb := mustBuild(t, s, "b", tt.other)
			if same := pa.Transport == pb.Transport; same != tt.wantSame {
				t.Errorf("same transport = %v, want %v", same, tt.wantSame)
			}
		})
	}

	t.Run("files rewritten", func(t *testing.T) {
		s := NewState()
		rotating := clientCert{certFile: filepath.Join(dir, "rot.crt"), keyFile: filepath.Join(dir, "rot.key")}
		writeCA(t, dir, "rot.crt", mustRead(t, a.certFile))
		writeCA(t, dir, "rot.key", a.keyPEM)
		before := mustBuild(t, s, "p", withClientCert(config.SchemeHTTPS, ca, rotating))
		s.Commit(map[string]*Pool{"p": before}, nil)
		writeCA(t, dir, "rot.crt", mustRead(t, b.certFile))
		writeCA(t, dir, "rot.key", b.keyPEM)
		after := mustBuild(t, s, "p", withClientCert(config.SchemeHTTPS, ca, rotating))
		if after.Transport == before.Transport {
			t.Fatalf("the files of the client certificate changed and the pool kept its transport, want a new one")
		}
		if got := after.files.clientCert.Certificate[0]; !bytes.Equal(got, b.der) {
			t.Errorf("after the files changed the pool presents another certificate than theirs")
		}
		if again := mustBuild(t, s, "q", withClientCert(config.SchemeHTTPS, ca, b)); again.Transport != after.Transport {
			t.Errorf("b's files and the rewritten files hold the same certificate but got different transports")
		}
	})
}

// TestClientCertPresented runs handshakes against members that ask for a
// client certificate and accept only a's, naming an authority that did not
// issue it: a pool with a's certificate reaches them, pools without it or
// with another one do not.
func TestClientCertPresented(t *testing.T) {
	dir := t.TempDir()
	a, b := writeClientCert(t, dir, "a"), writeClientCert(t, dir, "b")
	otherCA, err := certs.SelfSigned("other authority")
	if err != nil {
		t.Fatal(err)
	}
	member := func(http2 bool) *httptest.Server {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
		srv.Config.ErrorLog = quietLog
		srv.EnableHTTP2 = http2
		names := x509.NewCertPool()
		names.AddCert(otherCA.Leaf)
		srv.TLS = &tls.Config{
			ClientAuth: tls.RequireAnyClientCert,
			ClientCAs:  names, // only named in the request, not used to verify
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				if len(raw) == 0 || !bytes.Equal(raw[0], a.der) {
					return errors.New("not a's certificate")
				}
				return nil
			},
		}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv
	}
	h1, h2 := member(false), member(true)
	caOf := func(srv *httptest.Server) string {
		return writeCA(t, t.TempDir(), "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	}
	tests := []struct {
		name   string
		srv    *httptest.Server
		cfg    *config.Pool
		wantOK bool
	}{
		{name: "https with a's certificate", srv: h1, cfg: withClientCert(config.SchemeHTTPS, caOf(h1), a), wantOK: true},
		{name: "h2 with a's certificate", srv: h2, cfg: withClientCert(config.SchemeH2, caOf(h2), a), wantOK: true},
		{name: "https with b's certificate", srv: h1, cfg: withClientCert(config.SchemeHTTPS, caOf(h1), b)},
		{name: "h2 with b's certificate", srv: h2, cfg: withClientCert(config.SchemeH2, caOf(h2), b)},
		{name: "https without a certificate", srv: h1, cfg: &config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: caOf(h1)}}},
		{name: "h2 without a certificate", srv: h2, cfg: &config.Pool{Scheme: config.SchemeH2, TLS: &config.PoolTLS{CAFile: caOf(h2)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustBuild(t, NewState(), "p", tt.cfg).Transport
			defer tr.Close()
			resp, err := roundTrip(tr, tt.srv.URL+"/")
			if !tt.wantOK {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("request succeeded with status %d, want the member to refuse the handshake", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("request failed: %v", err)
			}
			defer resp.Body.Close()
			if body, _ := io.ReadAll(resp.Body); string(body) != "ok" {
				t.Errorf("member answered %d %q, want 200 \"ok\"", resp.StatusCode, body)
			}
		})
	}
}
