package daemon

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"
)

const wildcardConfig = baseConfig + `
tenants:
  t:
    applications:
      exact:
        domains: [example.com]
        default_route: {action: {respond: {status: 200, body: "exact"}}}
      one:
        domains: ["*.example.com"]
        tls: {cert_file: "{{.CertOne}}", key_file: "{{.KeyOne}}"}
        default_route: {action: {respond: {status: 200, body: "one"}}}
      deep:
        domains: ["**.example.com"]
        tls: {cert_file: "{{.CertDeep}}", key_file: "{{.KeyDeep}}"}
        default_route: {action: {respond: {status: 200, body: "deep"}}}
      deep-c:
        domains: ["**.c.example.com"]
        tls: {cert_file: "{{.CertDeepC}}", key_file: "{{.KeyDeepC}}"}
        default_route: {action: {respond: {status: 200, body: "deep-c"}}}
`

// TestDeepWildcardDomains serves "**." domains (one or more labels) beside
// an exact name and a one-label wildcard, over HTTP and HTTPS: the host is
// routed, and the certificate chosen by SNI, with the same precedence
// (exact, then the one-label wildcard, then the longest "**." suffix).
func TestDeepWildcardDomains(t *testing.T) {
	dir := t.TempDir()
	files := map[string]any{}
	for _, c := range []struct{ name, san string }{{"One", "*.example.com"}, {"Deep", "*.example.com"}, {"DeepC", "*.c.example.com"}} {
		cert, key := newCA(t, "CA of "+c.name).issue(t, c.san)
		files["Cert"+c.name] = writeFile(t, dir, c.name+".crt", cert)
		files["Key"+c.name] = writeFile(t, dir, c.name+".key", key)
	}
	td := startDaemon(t, wildcardConfig, files)
	const fake = "Ramjet Ingress Controller Fake Certificate"
	cases := []struct {
		host   string
		status int
		body   string
		issuer string // of the certificate served for host by SNI
	}{
		{"example.com", 200, "exact", fake},
		{"b.example.com", 200, "one", "CA of One"},
		{"a.b.example.com", 200, "deep", "CA of Deep"},
		{"x.y.z.example.com", 200, "deep", "CA of Deep"},
		{"c.example.com", 200, "one", "CA of One"},
		{"a.c.example.com", 200, "deep-c", "CA of DeepC"},
		{"a.b.c.example.com", 200, "deep-c", "CA of DeepC"},
		{"a.b.example.org", 404, "Not Found: no application serves this host\n", fake},
	}
	for _, tc := range cases {
		t.Run("http "+tc.host, func(t *testing.T) {
			status, body, _ := get(t, client(), td.url("http")+"/", tc.host)
			if status != tc.status || body != tc.body {
				t.Errorf("got %d %q, want %d %q", status, body, tc.status, tc.body)
			}
		})
		t.Run("https "+tc.host, func(t *testing.T) {
			status, body, issuer := getBySNI(t, td.url("https")+"/", tc.host, tc.host)
			if status != tc.status || body != tc.body || issuer != tc.issuer {
				t.Errorf("got %d %q from a certificate issued by %q, want %d %q from %q", status, body, issuer, tc.status, tc.body, tc.issuer)
			}
		})
	}
}

// getBySNI sends a GET over TLS with sni as the server name and host as
// the Host header, and returns status, body and the issuer of the
// certificate served.
func getBySNI(t *testing.T, url, sni, host string) (int, string, string) {
	t.Helper()
	c := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: sni, InsecureSkipVerify: true}},
		Timeout:   10 * time.Second,
	}
	defer c.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s (SNI %s, Host %s): %v", url, sni, host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.TLS.PeerCertificates[0].Issuer.CommonName
}
