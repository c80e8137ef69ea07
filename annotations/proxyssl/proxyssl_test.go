package proxyssl_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

const ns = "pay"

var origin = core.Origin{Kind: "Ingress", Namespace: ns, Name: "api"}

// secrets is a map-backed registry.Secrets: "namespace/name" to data.
type secrets map[string]map[string][]byte

func (s secrets) Secret(namespace, name string) (map[string][]byte, bool) {
	data, ok := s[namespace+"/"+name]
	return data, ok
}

// ConfigMap: the family reads none.
func (s secrets) ConfigMap(string, string) (map[string]string, bool) { return nil, false }

// pki is a CA and a client certificate it signed, in PEM.
type pki struct {
	ca, cert, key, otherKey []byte
}

func newPKI(t *testing.T) pki {
	t.Helper()
	caKey, key := newKey(t), newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test backend CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "ramjet-proxy"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caTmpl, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pki{
		ca:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		key:      keyPEM(t, key),
		otherKey: keyPEM(t, caKey),
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keyPEM(t *testing.T, k *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// want is the expected pool settings: the proxy-ssl fields.
type want struct {
	serverName string
	ca         bool  // the Secret's ca.crt
	client     bool  // the Secret's client certificate
	verify     *bool // proxy-ssl-verify as recorded
}

var on, off = new(true), new(false)

func TestProxySSL(t *testing.T) {
	p := newPKI(t)
	store := secrets{
		ns + "/full":     {"ca.crt": p.ca, "tls.crt": p.cert, "tls.key": p.key},
		ns + "/ca":       {"ca.crt": p.ca},
		ns + "/client":   {"tls.crt": p.cert, "tls.key": p.key},
		ns + "/empty":    {"README": []byte("readme-content")},
		ns + "/notpem":   {"ca.crt": []byte("not a certificate")},
		ns + "/keyasca":  {"ca.crt": p.key},
		ns + "/certonly": {"ca.crt": p.ca, "tls.crt": p.cert},
		ns + "/keyonly":  {"ca.crt": p.ca, "tls.key": p.key},
		ns + "/mismatch": {"ca.crt": p.ca, "tls.crt": p.cert, "tls.key": p.otherKey},
		"other/full":     {"ca.crt": p.ca, "tls.crt": p.cert, "tls.key": p.key},
	}
	https := map[string]string{"backend-protocol": "HTTPS"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name        string
		annotations map[string]string // keys without the prefix
		want        want
		// findings are "Reason key: part of the message", in order.
		findings []string
	}{
		{name: "secret and name", annotations: with(https, "proxy-ssl-secret", "full", "proxy-ssl-name", "api.internal.example"),
			want: want{serverName: "api.internal.example", ca: true, client: true}},
		{name: "namespace/name of the object's namespace", annotations: with(https, "proxy-ssl-secret", ns+"/full"),
			want: want{ca: true, client: true}},
		{name: "GRPCS with a CA only", annotations: map[string]string{"backend-protocol": "grpcs", "proxy-ssl-secret": "ca"},
			want: want{ca: true}},
		{name: "client certificate without CA", annotations: with(https, "proxy-ssl-secret", "client"),
			want: want{client: true}},
		{name: "secret name with spaces", annotations: with(https, "proxy-ssl-secret", " ca "), want: want{ca: true}},
		{name: "name alone", annotations: with(https, "proxy-ssl-name", "api.internal.example"), want: want{serverName: "api.internal.example"}},
		{name: "name is lowered and trimmed", annotations: with(https, "proxy-ssl-name", " API.Internal.Example "), want: want{serverName: "api.internal.example"}},
		{name: "name is an IPv4 address", annotations: with(https, "proxy-ssl-name", "10.0.0.1"), want: want{serverName: "10.0.0.1"}},
		{name: "name is an IPv6 address", annotations: with(https, "proxy-ssl-name", "fd00::1"), want: want{serverName: "fd00::1"}},
		{name: "name with 63-byte label", annotations: with(https, "proxy-ssl-name", strings.Repeat("a", 63)+".example"),
			want: want{serverName: strings.Repeat("a", 63) + ".example"}},
		// proxy-ssl-verify is recorded; the Ingress input weighs it with
		// --backend-tls-verify (sources/testdata/backend-tls-verify-*).
		{name: "verify on", annotations: with(https, "proxy-ssl-verify", "on"), want: want{verify: on}},
		{name: "verify ON", annotations: with(https, "proxy-ssl-verify", "ON", "proxy-ssl-secret", "ca"), want: want{ca: true, verify: on}},
		{name: "verify off", annotations: with(https, "proxy-ssl-verify", "off", "proxy-ssl-secret", "ca"), want: want{ca: true, verify: off}},
		{name: "verify OFF", annotations: with(https, "proxy-ssl-verify", " OFF "), want: want{verify: off}},
		{name: "verify other value", annotations: with(https, "proxy-ssl-verify", "true"),
			findings: []string{`InvalidAnnotation proxy-ssl-verify: "true" is neither "on" nor "off"`}},
		{name: "wildcard name", annotations: with(https, "proxy-ssl-name", "*.internal.example"),
			findings: []string{`InvalidAnnotation proxy-ssl-name: "*.internal.example" is a wildcard`}},
		{name: "nginx variable as name", annotations: with(https, "proxy-ssl-name", "$host"),
			findings: []string{`InvalidAnnotation proxy-ssl-name: "$host" holds a $: nginx variables are not interpolated`}},
		{name: "name with underscore", annotations: with(https, "proxy-ssl-name", "api_internal.example"),
			findings: []string{`InvalidAnnotation proxy-ssl-name: "api_internal.example" is not a DNS name`}},
		{name: "name with trailing dot", annotations: with(https, "proxy-ssl-name", "api.example."),
			findings: []string{`InvalidAnnotation proxy-ssl-name: "api.example." is not a DNS name`}},
		{name: "name with port", annotations: with(https, "proxy-ssl-name", "api.example:443"),
			findings: []string{`InvalidAnnotation proxy-ssl-name: "api.example:443" is not a DNS name`}},
		{name: "bracketed IPv6 name", annotations: with(https, "proxy-ssl-name", "[fd00::1]"),
			findings: []string{`InvalidAnnotation proxy-ssl-name: "[fd00::1]" is not a DNS name`}},
		{name: "label over 63 bytes", annotations: with(https, "proxy-ssl-name", strings.Repeat("a", 64)+".example"),
			findings: []string{"InvalidAnnotation proxy-ssl-name: "}},
		{name: "empty name", annotations: with(https, "proxy-ssl-name", ""),
			findings: []string{`InvalidAnnotation proxy-ssl-name: "" is not a DNS name`}},
		{name: "invalid secret name", annotations: with(https, "proxy-ssl-secret", "Bad_Name"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: "Bad_Name" is not a Secret name`}},
		{name: "secret of another namespace", annotations: with(https, "proxy-ssl-secret", "other/full", "proxy-ssl-name", "api.internal.example"),
			want:     want{serverName: "api.internal.example"},
			findings: []string{`InvalidAnnotation proxy-ssl-secret: "other/full" is in another namespace`}},
		{name: "missing secret", annotations: with(https, "proxy-ssl-secret", "nosuch"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: Secret "nosuch" does not exist, so the members are verified against the system's roots`}},
		{name: "secret without the keys", annotations: with(https, "proxy-ssl-secret", "empty"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: Secret "empty" has neither ca.crt (a CA bundle) nor tls.crt and tls.key`}},
		{name: "ca.crt not PEM", annotations: with(https, "proxy-ssl-secret", "notpem"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: Secret "notpem" has a ca.crt that does not load: CA bundle: no PEM data found`}},
		{name: "ca.crt holding a key", annotations: with(https, "proxy-ssl-secret", "keyasca"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: Secret "keyasca" has a ca.crt that does not load: CA bundle: PEM block 1 is not a certificate`}},
		{name: "tls.crt without tls.key", annotations: with(https, "proxy-ssl-secret", "certonly"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: Secret "certonly" has tls.crt but no tls.key`}},
		{name: "tls.key without tls.crt", annotations: with(https, "proxy-ssl-secret", "keyonly"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: Secret "keyonly" has tls.key but no tls.crt`}},
		{name: "key of another certificate", annotations: with(https, "proxy-ssl-secret", "mismatch"),
			findings: []string{`InvalidAnnotation proxy-ssl-secret: Secret "mismatch" has a client certificate that does not load: tls.key: the key does not match the certificate`}},

		{name: "HTTP backend", annotations: map[string]string{"proxy-ssl-secret": "full", "proxy-ssl-name": "api.internal.example", "proxy-ssl-verify": "on"},
			findings: []string{
				"InvalidAnnotation proxy-ssl-name: applies only to members reached over TLS (backend-protocol HTTPS or GRPCS), and the backend protocol of this object is HTTP",
				"InvalidAnnotation proxy-ssl-secret: applies only to members reached over TLS",
				"InvalidAnnotation proxy-ssl-verify: applies only to members reached over TLS",
			}},
		{name: "explicit HTTP backend", annotations: map[string]string{"backend-protocol": "http", "proxy-ssl-name": "api.internal.example"},
			findings: []string{"InvalidAnnotation proxy-ssl-name: applies only to members reached over TLS (backend-protocol HTTPS or GRPCS), and the backend protocol of this object is HTTP"}},
		{name: "GRPC backend", annotations: map[string]string{"backend-protocol": "grpc", "proxy-ssl-secret": "ca"},
			findings: []string{"InvalidAnnotation proxy-ssl-secret: applies only to members reached over TLS (backend-protocol HTTPS or GRPCS), and the backend protocol of this object is GRPC"}},
		{name: "invalid backend protocol is HTTP", annotations: map[string]string{"backend-protocol": "FCGI", "proxy-ssl-name": "api.internal.example"},
			findings: []string{
				`InvalidAnnotation backend-protocol: "FCGI" (FastCGI) is not supported`,
				"InvalidAnnotation proxy-ssl-name: applies only to members reached over TLS (backend-protocol HTTPS or GRPCS), and the backend protocol of this object is HTTP",
			}},
		{name: "verify off on an HTTP backend", annotations: map[string]string{"proxy-ssl-verify": "off"},
			findings: []string{`InvalidAnnotation proxy-ssl-verify: applies only to members reached over TLS`}},

		{name: "ciphers have no counterpart", annotations: with(https, "proxy-ssl-ciphers", "HIGH:!aNULL"),
			findings: []string{"UnknownAnnotation proxy-ssl-ciphers has no counterpart in Ramjet: ramjetd uses Go's TLS cipher suites"}},
		{name: "protocols have no counterpart", annotations: with(https, "proxy-ssl-protocols", "TLSv1.3"),
			findings: []string{"UnknownAnnotation proxy-ssl-protocols has no counterpart in Ramjet: ramjetd offers TLS 1.2 and TLS 1.3"}},
		{name: "server-name has no counterpart", annotations: with(https, "proxy-ssl-server-name", "on"),
			findings: []string{"UnknownAnnotation proxy-ssl-server-name has no counterpart in Ramjet: ramjetd always sends SNI"}},
		{name: "verify-depth has no counterpart, even on HTTP", annotations: map[string]string{"proxy-ssl-verify-depth": "2"},
			findings: []string{"UnknownAnnotation proxy-ssl-verify-depth has no counterpart in Ramjet: ramjetd verifies the members' whole certificate chain"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			for k, v := range tc.annotations {
				annotations[registry.Prefix+k] = v
			}
			got := registry.Apply(registry.All(), origin, annotations, store)
			if got.Refused {
				t.Error("the object is refused; proxy-ssl never refuses")
			}
			pool := got.Settings.Pool
			if pool.ServerName != tc.want.serverName {
				t.Errorf("server name = %q, want %q", pool.ServerName, tc.want.serverName)
			}
			if tc.want.ca != bytes.Equal(pool.CA, p.ca) || !tc.want.ca && pool.CA != nil {
				t.Errorf("CA = %q, want the Secret's ca.crt: %v", pool.CA, tc.want.ca)
			}
			checkClient(t, pool.ClientCert, tc.want.client, p)
			if got, want := got.Settings.VerifyMembers, tc.want.verify; (got == nil) != (want == nil) || got != nil && *got != *want {
				t.Errorf("VerifyMembers = %v, want %v", fmtBool(got), fmtBool(want))
			}
			checkFindings(t, got.Findings, tc.findings, p)
			if err := dataPlaneAccepts(pool); err != nil {
				t.Errorf("the data plane refuses the pool: %v", err)
			}
		})
	}
}

func fmtBool(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

func checkClient(t *testing.T, c *core.Certificate, want bool, p pki) {
	t.Helper()
	switch {
	case !want && c != nil:
		t.Errorf("client certificate set, want none")
	case want && c == nil:
		t.Errorf("no client certificate, want the Secret's")
	case want && (!bytes.Equal(c.CertPEM, p.cert) || !bytes.Equal(c.KeyPEM, p.key) || c.Parsed == nil || c.Parsed.Leaf.Subject.CommonName != "ramjet-proxy"):
		t.Errorf("client certificate = %+v, want the Secret's tls.crt and tls.key, parsed", c)
	}
}

// checkFindings compares findings with "Reason key: message part" lines and
// checks that no message holds Secret content.
func checkFindings(t *testing.T, findings []core.Finding, want []string, p pki) {
	t.Helper()
	var got []string
	for _, f := range findings {
		got = append(got, string(f.Reason)+" "+strings.TrimPrefix(f.Message, registry.Prefix))
		for _, secret := range [][]byte{p.ca, p.cert, p.key, []byte("BEGIN"), []byte("readme-content")} {
			if strings.Contains(f.Message, string(secret)) {
				t.Errorf("finding %q holds Secret content", f.Message)
			}
		}
	}
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(got[i], want[i])
	}
	if !ok {
		t.Errorf("findings:\n%s\nwant (prefixes):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range findings {
		if f.Reason == core.InvalidAnnotation && !strings.HasSuffix(f.Message, "; the key is ignored") {
			t.Errorf("finding %q does not say the key is ignored", f.Message)
		}
	}
}

// dataPlaneAccepts validates a pool with the settings' TLS as the data
// plane would (files are not read by validation).
func dataPlaneAccepts(s core.PoolSettings) error {
	pool := &config.Pool{Scheme: s.Scheme, Members: []config.Member{{Address: "10.0.0.1:8443"}}}
	if s.ServerName != "" || s.CA != nil || s.ClientCert != nil {
		pool.TLS = &config.PoolTLS{ServerName: s.ServerName}
		if s.CA != nil {
			pool.TLS.CAFile = "/ca.pem"
		}
		if s.ClientCert != nil {
			pool.TLS.CertFile, pool.TLS.KeyFile = "/c.crt", "/c.key"
		}
	}
	c := &config.Config{
		Server: config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
		Tenants: map[string]*config.Tenant{"t": {
			Pools: map[string]*config.Pool{"p": pool},
			Applications: map[string]*config.Application{"a": {Domains: []string{"example.com"},
				Routes: []*config.Route{{Match: config.Match{Path: config.PathMatch{Prefix: "/"}}, Action: config.Action{Pool: "p"}}}}},
		}},
	}
	return c.Validate()
}

// TestNamesTheDataPlaneAccepts checks the validator against the data
// plane's own validation of tls.server_name: every name the family accepts
// is one the data plane accepts.
func TestNamesTheDataPlaneAccepts(t *testing.T) {
	names := []string{"a", "api.internal.example", "API.EXAMPLE", "xn--bcher-kva.example", "1.2.3.4", "::1", "fd00::1", "::ffff:10.0.0.1",
		"a-b.c", "-a.example", "a-.example", "a..b", ".a", "a.", "*", "*.a", "a*", "a b", "é.example", "a/b", "a:1", "[::1]", "1.2.3.04", "0x1.2.3.4"}
	for _, name := range names {
		annotations := map[string]string{registry.Prefix + "backend-protocol": "HTTPS", registry.Prefix + "proxy-ssl-name": name}
		got := registry.Apply(registry.All(), origin, annotations, nil)
		accepted := !slices.ContainsFunc(got.Findings, func(f core.Finding) bool { return f.Reason == core.InvalidAnnotation })
		if err := dataPlaneAccepts(got.Settings.Pool); err != nil {
			t.Errorf("%q: accepted as %q, which the data plane refuses: %v", name, got.Settings.Pool.ServerName, err)
		}
		if accepted != (got.Settings.Pool.ServerName != "") {
			t.Errorf("%q: accepted %v but server name %q", name, accepted, got.Settings.Pool.ServerName)
		}
	}
}
