package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"
)

// tlsObjects are one Ingress per row of TestHTTPSBackend, each with
// backend-protocol HTTPS and its own Service (so that each gets its own
// pool), and the Secrets of proxy-ssl-secret: ca-only holds the test CA,
// client also a client certificate the CA issued.
const tlsObjects = `
{{- range .ingresses}}
{{ingress .name (printf "%s.example.com" .name) .name "backend-protocol" "HTTPS" .annotations}}
{{service .name .backend}}
{{- end}}
---
apiVersion: v1
kind: Secret
metadata: {name: ca-only, namespace: app}
type: Opaque
data:
  ca.crt: {{b64 .ca}}
---
apiVersion: v1
kind: Secret
metadata: {name: client, namespace: app}
type: Opaque
data:
  ca.crt: {{b64 .ca}}
  tls.crt: {{b64 .clientCert}}
  tls.key: {{b64 .clientKey}}
`

// TestHTTPSBackend: ramjetd verifies members reached over TLS (by default:
// --backend-tls-verify=always; test/e2e/controller covers annotated).
// A member whose certificate a test CA issued for backend.internal is
// reached with proxy-ssl-name backend.internal and proxy-ssl-secret holding
// the CA; without the Secret (the system's roots) or with another name the
// handshake fails and the client gets 502, where ingress-nginx, which does
// not verify by default, would answer 200. A member that requires a client
// certificate gets the one of the Secret's tls.crt and tls.key.
func TestHTTPSBackend(t *testing.T) {
	ca := newCA(t, "e2e test CA")
	_, _, serverCert := ca.issue(t, "backend.internal", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey, _ := ca.issue(t, "ramjet.client", x509.ExtKeyUsageClientAuth)
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	secure := startBackend(t, "secure", &tls.Config{Certificates: []tls.Certificate{serverCert}})
	mutual := startBackend(t, "mutual", &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    roots,
	})

	cases := []struct {
		name        string
		annotations map[string]string
		backend     *backend
		status      int
	}{
		{"verified", map[string]string{"proxy-ssl-name": "backend.internal", "proxy-ssl-secret": "ca-only"}, secure, http.StatusOK},
		{"untrusted", map[string]string{"proxy-ssl-name": "backend.internal"}, secure, http.StatusBadGateway},
		{"wrong-name", map[string]string{"proxy-ssl-name": "other.internal", "proxy-ssl-secret": "ca-only"}, secure, http.StatusBadGateway},
		{"client-certificate", map[string]string{"proxy-ssl-name": "backend.internal", "proxy-ssl-secret": "client"}, mutual, http.StatusOK},
		{"no-client-certificate", map[string]string{"proxy-ssl-name": "backend.internal", "proxy-ssl-secret": "ca-only"}, mutual, http.StatusBadGateway},
	}
	ingresses := make([]map[string]any, len(cases))
	for i, tc := range cases {
		ingresses[i] = map[string]any{"name": tc.name, "annotations": tc.annotations, "backend": tc.backend}
	}
	rj := start(t, tlsObjects, map[string]any{"ingresses": ingresses, "ca": ca.pem, "clientCert": clientCert, "clientKey": clientKey})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.backend.requests.Load()
			got := rj.get(t, tc.name+".example.com", "/orders?page=2")
			if got.status != tc.status {
				t.Fatalf("status %d from %q, want %d (body %q)", got.status, got.backend(), tc.status, got.body)
			}
			reached := tc.backend.requests.Load() > before
			if want := tc.status == http.StatusOK; reached != want {
				t.Fatalf("reached the backend %v, want %v", reached, want)
			}
			if tc.status == http.StatusOK && (got.backend() != tc.backend.name || got.echo.Path != "/orders" || got.echo.Query != "page=2") {
				t.Errorf("answered by %q for %q ? %q, want %s for /orders ? page=2", got.backend(), got.echo.Path, got.echo.Query, tc.backend.name)
			}
		})
	}
}
