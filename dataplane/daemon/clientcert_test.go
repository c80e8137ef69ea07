package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
)

var clientCertConfig = baseConfig + `
tenants:
  mtls:
    applications:
` + oneRouteApp("with", "with.test", "with") +
	oneRouteApp("withh2", "with-h2.test", "with-h2") +
	oneRouteApp("without", "without.test", "without") +
	oneRouteApp("rogue", "rogue.test", "rogue") + `
    pools:
      with: {scheme: https, tls: {ca_file: "{{.CA}}", cert_file: "{{.Certs}}/good.crt", key_file: "{{.Certs}}/good.key"}, members: ["{{.Member}}"]}
      with-h2: {scheme: h2, tls: {ca_file: "{{.CA}}", cert_file: "{{.Certs}}/good.crt", key_file: "{{.Certs}}/good.key"}, members: ["{{.Member}}"]}
      without: {scheme: https, tls: {ca_file: "{{.CA}}"}, members: ["{{.Member}}"]}
      rogue: {scheme: https, tls: {ca_file: "{{.CA}}", cert_file: "{{.Certs}}/rogue.crt", key_file: "{{.Certs}}/rogue.key"}, members: ["{{.Member}}"]}
`

// TestMutualTLSToMembers proves that a pool with cert_file and key_file
// presents its client certificate to a member that requires and verifies
// one, over HTTP/1.1 and HTTP/2, that a pool without it (or with one the
// member's authority did not issue) gets 502 and the member no request, and
// that a reload picks up files rewritten in place.
func TestMutualTLSToMembers(t *testing.T) {
	memberCA, clientCA, rogueCA := newCA(t, "member CA"), newCA(t, "client CA"), newCA(t, "rogue CA")
	serverCert, serverKey := memberCA.issue(t, "127.0.0.1")
	goodCert, goodKey := clientCA.issue(t, "ramjet")
	rogueCert, rogueKey := rogueCA.issue(t, "ramjet")
	clients := x509.NewCertPool()
	clients.AddCert(clientCA.cert)
	memberTLS := streamTLSConfig(t, serverCert, serverKey, "h2", "http/1.1")
	// The member requires a certificate and verifies it against the client
	// CA itself: the test CA issues server certificates only, which
	// RequireAndVerifyClientCert would refuse for their extended key usage.
	memberTLS.ClientAuth = tls.RequireAnyClientCert
	memberTLS.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
		leaf, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return err
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: clients, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		return err
	}
	member := startStreamServer(t, &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "client %s %s", r.TLS.PeerCertificates[0].Subject.CommonName, r.Proto)
		}),
		Protocols: streamProtocols(true, true, false),
	}, memberTLS)

	dir := t.TempDir()
	writeCerts := func(good, rogue [2][]byte) {
		writeFile(t, dir, "good.crt", good[0])
		writeFile(t, dir, "good.key", good[1])
		writeFile(t, dir, "rogue.crt", rogue[0])
		writeFile(t, dir, "rogue.key", rogue[1])
	}
	writeCerts([2][]byte{goodCert, goodKey}, [2][]byte{rogueCert, rogueKey})
	td := startDaemon(t, clientCertConfig, map[string]any{"Certs": dir, "CA": writeFile(t, dir, "ca.pem", memberCA.pem), "Member": member.addr})

	type want struct {
		status int
		body   string // prefix
	}
	check := func(t *testing.T, cases map[string]want) {
		t.Helper()
		for host, w := range cases {
			requests, conns := member.requests.Load(), member.conns.Load()
			status, body, _ := rawGet(t, td.bound.get("http"), host, "/")
			if status != w.status || !strings.HasPrefix(body, w.body) {
				t.Errorf("%s: got %d %q, want %d %q...", host, status, body, w.status, w.body)
				continue
			}
			if w.status == http.StatusOK {
				continue
			}
			// The 502 must come from a refused handshake: the member saw a
			// connection but no request.
			if member.conns.Load() == conns {
				t.Errorf("%s: the member saw no connection; the 502 is not its refusal", host)
			}
			if got := member.requests.Load() - requests; got != 0 {
				t.Errorf("%s: the member received %d requests, want 0", host, got)
			}
		}
	}
	t.Run("as configured", func(t *testing.T) {
		check(t, map[string]want{
			"with.test":    {200, "client ramjet HTTP/1.1"},
			"with-h2.test": {200, "client ramjet HTTP/2.0"},
			"without.test": {502, "Bad Gateway: "},
			"rogue.test":   {502, "Bad Gateway: "},
		})
	})
	t.Run("files swapped and reloaded", func(t *testing.T) {
		writeCerts([2][]byte{rogueCert, rogueKey}, [2][]byte{goodCert, goodKey})
		td.reload(t)
		check(t, map[string]want{
			"with.test":    {502, "Bad Gateway: "},
			"with-h2.test": {502, "Bad Gateway: "},
			"rogue.test":   {200, "client ramjet HTTP/1.1"},
		})
	})
	t.Run("a key that does not fit is refused at reload", func(t *testing.T) {
		writeFile(t, dir, "good.key", goodKey) // good.crt holds the rogue certificate now
		_, err := td.admin.Reload(t.Context())
		var refused *admin.ConfigError
		if !errors.As(err, &refused) {
			t.Fatalf("reload: %v, want a refusal", err)
		}
		problems := strings.Join(refused.Problems, "\n")
		if !strings.Contains(problems, "tenants.mtls.pools.with: tls.key_file: ") || !strings.Contains(problems, "does not match") {
			t.Errorf("problems %q, want tenants.mtls.pools.with: tls.key_file: ... does not match", problems)
		}
		if keyLine := strings.Split(string(goodKey), "\n")[1]; strings.Contains(problems, "PRIVATE KEY") || strings.Contains(problems, keyLine[:20]) {
			t.Errorf("the refusal shows the key: %q", problems)
		}
		// The running configuration still presents what it loaded.
		check(t, map[string]want{"rogue.test": {200, "client ramjet HTTP/1.1"}})
	})
}
