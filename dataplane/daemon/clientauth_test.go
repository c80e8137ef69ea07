package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/certs/certstest"
	"github.com/ramjet-dev/ramjet/policies/clientcert"
)

// clientAuthApp is an application of secure.test's tenant with its own
// client_auth settings (the YAML of the mapping, without braces).
func clientAuthApp(name, domain, settings string) string {
	app := fmt.Sprintf("      %s:\n        domains: [%s]\n        tls: {cert_file: \"{{.Files}}/server.crt\", key_file: \"{{.Files}}/server.key\"}\n", name, domain)
	if settings != "" {
		app += "        client_auth: {" + settings + "}\n"
	}
	return app + "        routes:\n          - match: {path: {prefix: /}}\n            action: {pool: member}\n"
}

const clientAuthFiles = `ca_file: "{{.Files}}/ca.crt", crl_file: "{{.Files}}/ca.crl"`

var clientAuthConfig = baseConfig + `
tenants:
  secure:
    applications:
` + clientAuthApp("on", "on.test", clientAuthFiles+", pass_certificate: true") +
	clientAuthApp("optional", "optional.test", clientAuthFiles+", verify: optional") +
	clientAuthApp("noca", "noca.test", clientAuthFiles+", verify: optional_no_ca") +
	clientAuthApp("errpage", "errpage.test", clientAuthFiles+`, error_page: "https://login.test/certificate"`) +
	clientAuthApp("alice", "alice.test", clientAuthFiles+`, subject_regex: "CN=alice(,|$)"`) +
	strings.Replace(clientAuthApp("redirected", "redirected.test", clientAuthFiles), "        client_auth:", "        https_redirect: true\n        client_auth:", 1) +
	clientAuthApp("open", "open.test", "") + `
    pools:
      member: {members: ["{{.Member}}"]}
`

// clientAuthMember tells what it received under the ssl-client-* names.
func clientAuthMember(w http.ResponseWriter, r *http.Request) {
	cert := "no"
	if r.Header.Get(clientcert.HeaderCert) != "" {
		cert = "yes"
	}
	fmt.Fprintf(w, "verify=%s subject=%s issuer=%s cert=%s", r.Header.Get(clientcert.HeaderVerify),
		r.Header.Get(clientcert.HeaderSubjectDN), r.Header.Get(clientcert.HeaderIssuerDN), cert)
}

// clientPKI is the authorities and client certificates of the tests.
type clientPKI struct {
	ca, other                                       *certstest.CA
	alice, bob, expired, stranger, revoked, tooDeep tls.Certificate
}

func newClientPKI(t *testing.T) *clientPKI {
	p := &clientPKI{ca: certstest.NewCA(t, "client CA"), other: certstest.NewCA(t, "other CA")}
	p.alice = p.ca.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "alice"}})
	p.bob = p.ca.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "bob"}})
	p.expired = p.ca.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "alice"}, NotAfter: time.Now().Add(-time.Minute)})
	p.stranger = p.other.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "alice"}})
	p.revoked = p.ca.Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "alice"}})
	p.tooDeep = p.ca.Intermediate(t, "one").Intermediate(t, "two").Issue(t, certstest.Client{Subject: pkix.Name{CommonName: "alice"}})
	return p
}

// clientAuthDaemon is a daemon with the files of client_auth.
type clientAuthDaemon struct {
	*testDaemon
	// files is the directory of the certificates, CA and CRL files.
	files string
	// data is the configuration template's.
	data map[string]any
}

// startClientAuthDaemon writes the server certificate, the client CA and
// its CRL (revoking p.revoked) and starts a daemon on configTemplate, whose
// {{.Files}} is their directory.
func startClientAuthDaemon(t *testing.T, configTemplate string, p *clientPKI, data map[string]any) *clientAuthDaemon {
	t.Helper()
	dir := t.TempDir()
	serverCert, serverKey := newCA(t, "server CA").issue(t, "on.test", "optional.test", "noca.test", "errpage.test", "alice.test", "redirected.test", "open.test")
	writeFile(t, dir, "server.crt", serverCert)
	writeFile(t, dir, "server.key", serverKey)
	writeFile(t, dir, "ca.crt", p.ca.PEM())
	writeFile(t, dir, "ca.crl", p.ca.CRL(t, p.revoked.Leaf))
	if data == nil {
		data = map[string]any{}
	}
	data["Member"] = startBackend(t, clientAuthMember).addr
	data["Files"] = dir
	return &clientAuthDaemon{testDaemon: startDaemon(t, configTemplate, data), files: dir, data: data}
}

// tlsClient connects with serverName in SNI ("" sends none), presents cert
// (nil: none) whatever authorities the server names, and speaks HTTP/2 when h2 is set, HTTP/1.1 otherwise.
func tlsClient(serverName string, cert *tls.Certificate, h2 bool) *http.Client {
	cfg := &tls.Config{ServerName: serverName, InsecureSkipVerify: true}
	if cert != nil {
		// Sent whatever authorities the server names, as curl does (Go's
		// Certificates would be left out for an authority not named).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(!h2)
	protocols.SetHTTP2(h2)
	return &http.Client{
		Transport:     &http.Transport{TLSClientConfig: cfg, Protocols: protocols},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
}

// forgedGet sends a GET for host, with forged ssl-client-* headers, and
// returns the status, the body and the Location.
func forgedGet(t *testing.T, c *http.Client, url, host string, h2 bool) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set(clientcert.HeaderVerify, "SUCCESS")
	req.Header.Set(clientcert.HeaderSubjectDN, "CN=forged")
	req.Header.Set(clientcert.HeaderCert, "forged")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", url, host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := map[bool]int{false: 1, true: 2}[h2]; resp.ProtoMajor != want {
		t.Fatalf("the answer came over %s, want HTTP/%d", resp.Proto, want)
	}
	return resp.StatusCode, string(body), resp.Header.Get("Location")
}

var protocolsUnderTest = []struct {
	name string
	h2   bool
}{{"http1", false}, {"http2", true}}

// TestClientAuthVerification sends every kind of client certificate to
// the applications of every mode, over HTTP/1.1 and HTTP/2, and checks the
// answer and what the member received (never the client's forged values).
func TestClientAuthVerification(t *testing.T) {
	p := newClientPKI(t)
	td := startClientAuthDaemon(t, clientAuthConfig, p, nil)
	const aliceHeaders = "verify=SUCCESS subject=CN=alice issuer=CN=client CA,O=Ramjet Tests"
	tests := []struct {
		name       string
		host       string
		cert       *tls.Certificate
		wantStatus int
		wantBody   string // a prefix of the body
		wantLoc    string
	}{
		{"on, valid", "on.test", &p.alice, 200, aliceHeaders + " cert=yes", ""},
		{"on, expired", "on.test", &p.expired, 400, "Bad Request: The SSL certificate error", ""},
		{"on, other CA", "on.test", &p.stranger, 400, "Bad Request: The SSL certificate error", ""},
		{"on, revoked", "on.test", &p.revoked, 400, "Bad Request: The SSL certificate error", ""},
		{"on, too deep", "on.test", &p.tooDeep, 400, "Bad Request: The SSL certificate error", ""},
		{"on, none", "on.test", nil, 400, "Bad Request: No required SSL certificate was sent", ""},
		{"optional, valid", "optional.test", &p.alice, 200, aliceHeaders + " cert=no", ""},
		{"optional, none", "optional.test", nil, 200, "verify=NONE subject= issuer= cert=no", ""},
		{"optional, other CA", "optional.test", &p.stranger, 400, "Bad Request: The SSL certificate error", ""},
		{"optional_no_ca, other CA", "noca.test", &p.stranger, 200, "verify=FAILED:unable to get local issuer certificate subject=CN=alice issuer=CN=other CA", ""},
		{"optional_no_ca, expired", "noca.test", &p.expired, 400, "Bad Request: The SSL certificate error", ""},
		{"optional_no_ca, none", "noca.test", nil, 200, "verify=NONE", ""},
		{"error page, none", "errpage.test", nil, 302, "", "https://login.test/certificate"},
		{"error page, revoked", "errpage.test", &p.revoked, 302, "", "https://login.test/certificate"},
		{"subject regex, matching", "alice.test", &p.alice, 200, aliceHeaders, ""},
		{"subject regex, other subject", "alice.test", &p.bob, 403, "Forbidden: client certificate unauthorized", ""},
	}
	for _, proto := range protocolsUnderTest {
		for _, tt := range tests {
			t.Run(proto.name+"/"+tt.name, func(t *testing.T) {
				status, body, loc := forgedGet(t, tlsClient(tt.host, tt.cert, proto.h2), td.url("https")+"/", tt.host, proto.h2)
				if status != tt.wantStatus || !strings.HasPrefix(body, tt.wantBody) || loc != tt.wantLoc {
					t.Errorf("got %d %q (Location %q), want %d %q... (Location %q)", status, body, loc, tt.wantStatus, tt.wantBody, tt.wantLoc)
				}
			})
		}
	}
}

// TestClientAuthMisdirected proves that a request for a host with
// client_auth is answered 421 on a connection whose handshake named
// another host or none, over HTTP/1.1 and HTTP/2, and that the other
// combinations are served.
func TestClientAuthMisdirected(t *testing.T) {
	p := newClientPKI(t)
	td := startClientAuthDaemon(t, clientAuthConfig, p, nil)
	tests := []struct {
		name       string
		sni, host  string
		wantStatus int
	}{
		{"handshake for a host without client_auth", "open.test", "on.test", 421},
		{"handshake for another host with client_auth", "optional.test", "on.test", 421},
		{"handshake without SNI", "", "on.test", 421},
		{"handshake for the host", "on.test", "on.test", 200},
		{"host in another case, with a port", "on.test", "ON.test:443", 200},
		{"a host without client_auth on a client_auth handshake", "on.test", "open.test", 200},
	}
	for _, proto := range protocolsUnderTest {
		for _, tt := range tests {
			t.Run(proto.name+"/"+tt.name, func(t *testing.T) {
				status, body, _ := forgedGet(t, tlsClient(tt.sni, &p.alice, proto.h2), td.url("https")+"/", tt.host, proto.h2)
				if status != tt.wantStatus {
					t.Errorf("got %d %q, want %d", status, body, tt.wantStatus)
				}
			})
		}
	}
}

// TestClientAuthCoalescedConnection sends, over one HTTP/2 connection
// opened for open.test, a request for open.test and then one for on.test,
// as a browser coalescing connections would: the second is answered 421.
func TestClientAuthCoalescedConnection(t *testing.T) {
	p := newClientPKI(t)
	td := startClientAuthDaemon(t, clientAuthConfig, p, nil)
	c := tlsClient("open.test", &p.alice, true)
	handshakes := 0
	c.Transport.(*http.Transport).TLSClientConfig.VerifyConnection = func(tls.ConnectionState) error {
		handshakes++
		return nil
	}
	for _, step := range []struct {
		host       string
		wantStatus int
	}{{"open.test", 200}, {"on.test", 421}, {"open.test", 200}} {
		if status, body, _ := forgedGet(t, c, td.url("https")+"/", step.host, true); status != step.wantStatus {
			t.Errorf("Host %s: got %d %q, want %d", step.host, status, body, step.wantStatus)
		}
	}
	if handshakes != 1 {
		t.Errorf("the requests used %d connections, want 1", handshakes)
	}
}

// clientAuthReloadConfig is the configuration of on.test with settings
// as its client_auth ("": none).
func clientAuthReloadConfig(settings string) string {
	return baseConfig + `
tenants:
  secure:
    applications:
` + clientAuthApp("on", "on.test", settings) + `
    pools:
      member: {members: ["{{.Member}}"]}
`
}

// TestClientAuthReload rewrites the CA file and the CRL, and removes
// client_auth: a refused file keeps the old authorities serving, an
// accepted one applies to the connections already open, and without
// client_auth no certificate is needed.
func TestClientAuthReload(t *testing.T) {
	p := newClientPKI(t)
	td := startClientAuthDaemon(t, clientAuthReloadConfig(clientAuthFiles), p, nil)
	url := td.url("https") + "/"
	open := tlsClient("on.test", &p.alice, false) // keeps its connection across the reloads
	expect := func(t *testing.T, c *http.Client, want int) {
		t.Helper()
		if status, body, _ := forgedGet(t, c, url, "on.test", false); status != want {
			t.Errorf("got %d %q, want %d", status, body, want)
		}
	}
	expect(t, open, 200)

	writeFile(t, td.files, "ca.crt", []byte("not PEM"))
	td.expectRefused(t, "tenants.secure.applications.on.client_auth.ca_file")
	writeFile(t, td.files, "ca.crt", p.other.PEM())
	td.expectRefused(t, "tenants.secure.applications.on.client_auth.crl_file")
	expect(t, open, 200)

	writeFile(t, td.files, "ca.crl", p.other.CRL(t))
	td.reload(t)
	expect(t, open, 400)
	expect(t, tlsClient("on.test", &p.stranger, false), 200)

	td.write(t, clientAuthReloadConfig(""), td.data)
	td.reload(t)
	expect(t, tlsClient("on.test", nil, false), 200)
}

// expectRefused reloads and wants the refusal to name field.
func (td *testDaemon) expectRefused(t *testing.T, field string) {
	t.Helper()
	_, err := td.admin.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), field) {
		t.Fatalf("reload: got %v, want a refusal naming %s", err, field)
	}
}

// TestClientAuthHandshake checks what the handshake asks for by SNI: a
// certificate of the application's authorities, one of any authority in
// mode optional_no_ca, and none for a host without client_auth.
func TestClientAuthHandshake(t *testing.T) {
	p := newClientPKI(t)
	td := startClientAuthDaemon(t, clientAuthConfig, p, nil)
	tests := []struct {
		sni         string
		wantAsked   bool
		wantNamesCA bool
	}{
		{"on.test", true, true},
		{"noca.test", true, false},
		{"open.test", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.sni, func(t *testing.T) {
			asked, namesCA := false, false
			conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{
				ServerName:         tt.sni,
				InsecureSkipVerify: true,
				GetClientCertificate: func(req *tls.CertificateRequestInfo) (*tls.Certificate, error) {
					asked = true
					for _, name := range req.AcceptableCAs {
						namesCA = namesCA || string(name) == string(p.ca.Cert.RawSubject)
					}
					return &tls.Certificate{}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
			if asked != tt.wantAsked || namesCA != tt.wantNamesCA {
				t.Errorf("got asked %v naming the client CA %v, want %v and %v", asked, namesCA, tt.wantAsked, tt.wantNamesCA)
			}
		})
	}
}

// TestClientAuthPlainHTTP sends plain-HTTP requests, which carry no
// certificate, to applications with client_auth: refused in mode on unless
// the route redirects them to HTTPS, served as NONE in the optional modes.
func TestClientAuthPlainHTTP(t *testing.T) {
	td := startClientAuthDaemon(t, clientAuthConfig, newClientPKI(t), nil)
	tests := []struct {
		host       string
		wantStatus int
		wantBody   string
	}{
		{"on.test", 400, "Bad Request: No required SSL certificate was sent"},
		{"redirected.test", 308, ""},
		{"optional.test", 200, "verify=NONE subject= issuer= cert=no"},
		{"errpage.test", 302, ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			status, body, _ := forgedGet(t, client(), td.url("http")+"/", tt.host, false)
			if status != tt.wantStatus || !strings.HasPrefix(body, tt.wantBody) {
				t.Errorf("got %d %q, want %d %q...", status, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// TestClientAuthNoResumption proves that a handshake for a host with
// client_auth never resumes a session, while one for another host does.
func TestClientAuthNoResumption(t *testing.T) {
	p := newClientPKI(t)
	td := startClientAuthDaemon(t, clientAuthConfig, p, nil)
	tests := []struct {
		sni        string
		wantResume bool
	}{{"open.test", true}, {"on.test", false}}
	for _, tt := range tests {
		t.Run(tt.sni, func(t *testing.T) {
			cfg := &tls.Config{ServerName: tt.sni, InsecureSkipVerify: true, ClientSessionCache: tls.NewLRUClientSessionCache(4),
				GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &p.alice, nil }}
			resumed := false
			for range 2 {
				conn, err := tls.Dial("tcp", td.bound.get("https"), cfg)
				if err != nil {
					t.Fatal(err)
				}
				// TLS 1.3 tickets arrive after the handshake: a request
				// and its answer make sure the client has them.
				fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", tt.sni)
				io.ReadAll(conn)
				resumed = conn.ConnectionState().DidResume
				conn.Close()
			}
			if resumed != tt.wantResume {
				t.Errorf("got a resumed second handshake %v, want %v", resumed, tt.wantResume)
			}
		})
	}
}

// TestClientAuthRemovesRawHeaders sends the forged headers in lower case
// on the wire, as the fast HTTP/1.1 server reads them: the member sees
// only ramjetd's values.
func TestClientAuthRemovesRawHeaders(t *testing.T) {
	td := startClientAuthDaemon(t, clientAuthConfig, newClientPKI(t), nil)
	conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{ServerName: "optional.test", InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: optional.test\r\nssl-client-verify: SUCCESS\r\nSSL-CLIENT-SUBJECT-DN: CN=forged\r\nssl-client-cert: forged\r\nConnection: close\r\n\r\n")
	answer, _ := io.ReadAll(conn)
	if want := "verify=NONE subject= issuer= cert=no"; !strings.HasSuffix(string(answer), want) {
		t.Errorf("got %q, want an answer ending in %q", answer, want)
	}
}
