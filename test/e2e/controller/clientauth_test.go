package controller

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clientHeaders are the headers ramjetd gives the member about the
// client's certificate, which clientHeadersEcho answers back.
var clientHeaders = []string{"ssl-client-verify", "ssl-client-subject-dn"}

// clientHeadersEcho is a backend named name that answers, besides its name
// in X-Backend, the client certificate headers it received, each as
// Echo-<header>.
func clientHeadersEcho(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", name)
		for _, h := range clientHeaders {
			w.Header().Set("Echo-"+h, r.Header.Get(h))
		}
	})
}

// clientCASecret returns an Opaque Secret holding a client CA as ca.crt
// and, when crl is not nil, its revocation list as ca.crl, as
// auth-tls-secret reads them.
func (e *env) clientCASecret(name string, caPEM, crl []byte) *corev1.Secret {
	data := map[string][]byte{"ca.crt": caPEM}
	if crl != nil {
		data["ca.crl"] = crl
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// clientOf returns a client certificate of ca with the common name cn and
// its key.
func clientOf(t *testing.T, ca *testCA, cn string) tls.Certificate {
	t.Helper()
	certPEM, keyPEM, err := ca.IssueClient(cn)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// checkVerified returns an error unless GET url through client is 200 from
// backend web, whose member saw ssl-client-verify SUCCESS and the subject
// DN want.
func checkVerified(t *testing.T, client *http.Client, url, subject string) error {
	a, err := get(t.Context(), client, url)
	switch {
	case err != nil:
		return err
	case a.status != http.StatusOK || a.backend != "web":
		return fmt.Errorf("got %s, want 200 from backend web", a)
	case a.header.Get("Echo-ssl-client-verify") != "SUCCESS" || a.header.Get("Echo-ssl-client-subject-dn") != subject:
		return fmt.Errorf("the member saw ssl-client-verify %q and ssl-client-subject-dn %q, want SUCCESS and %q",
			a.header.Get("Echo-ssl-client-verify"), a.header.Get("Echo-ssl-client-subject-dn"), subject)
	}
	return nil
}

// checkStatus returns an error unless GET url through client is answered
// status by ramjetd itself.
func checkStatus(t *testing.T, client *http.Client, url string, status int) error {
	a, err := get(t.Context(), client, url)
	switch {
	case err != nil:
		return err
	case a.status != status || a.backend != "":
		return fmt.Errorf("got %s, want ramjetd's %d", a, status)
	}
	return nil
}

// TestClientCertificates: an Ingress with auth-tls-secret and
// auth-tls-verify-client on serves a client presenting a certificate of the
// Secret's CA, and its member sees ssl-client-verify SUCCESS and the
// subject DN; a client without a certificate gets 400. When the Secret's CA
// changes, the old client's certificate is refused and one of the new CA
// served; a ca.crl added to the Secret refuses the certificate it revokes;
// when the Secret is removed, the Ingress is not served (404) and gets an
// InvalidAnnotation Event.
func TestClientCertificates(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.network.Backend(t, "web", clientHeadersEcho("web")))
	serverCA := newCA(t, "ramjet e2e CA")
	host := e.host("mtls")
	cert, key := serverCA.issue(t, host)
	secrets := cluster.Client.CoreV1().Secrets(e.ns)
	if _, err := secrets.Create(t.Context(), e.tlsSecret("mtls-tls", cert, key), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	oldCA := newCA(t, "ramjet e2e client CA")
	if _, err := secrets.Create(t.Context(), e.clientCASecret("client-ca", oldCA.PEM, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.startRamjet()
	ing := e.ingress("mtls", host, "web", map[string]string{
		"nginx.ingress.kubernetes.io/auth-tls-secret":        "client-ca",
		"nginx.ingress.kubernetes.io/auth-tls-verify-client": "on",
	})
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: "mtls-tls"}}
	e.create(ing)

	url := "https://" + host + "/"
	client := func(certificates ...tls.Certificate) *http.Client {
		return r.Client(&tls.Config{RootCAs: serverCA.Pool, Certificates: certificates})
	}
	alice := client(clientOf(t, oldCA, "alice"))
	eventually(t, wait, "GET "+url+" with a certificate of the Secret's CA", func() error {
		return checkVerified(t, alice, url, "CN=alice")
	})
	if err := checkStatus(t, client(), url, http.StatusBadRequest); err != nil {
		t.Errorf("GET %s without a certificate: %v", url, err)
	}

	freshCA := newCA(t, "ramjet e2e client CA 2")
	if _, err := secrets.Update(t.Context(), e.clientCASecret("client-ca", freshCA.PEM, nil), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "GET "+url+" with a certificate of the replaced CA refused", func() error {
		return checkStatus(t, alice, url, http.StatusBadRequest)
	})
	bobCert := clientOf(t, freshCA, "bob")
	bob := client(bobCert)
	if err := checkVerified(t, bob, url, "CN=bob"); err != nil {
		t.Errorf("GET %s with a certificate of the new CA: %v", url, err)
	}

	// bob's certificate revoked by ca.crl: refused, carol's still served.
	crl, err := freshCA.RevocationList(bobCert.Leaf.SerialNumber)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Update(t.Context(), e.clientCASecret("client-ca", freshCA.PEM, crl), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "GET "+url+" with a revoked certificate refused", func() error {
		return checkStatus(t, bob, url, http.StatusBadRequest)
	})
	carol := client(clientOf(t, freshCA, "carol"))
	if err := checkVerified(t, carol, url, "CN=carol"); err != nil {
		t.Errorf("GET %s with a certificate the list does not revoke: %v", url, err)
	}

	if err := secrets.Delete(t.Context(), "client-ca", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "GET "+url+" not served once the CA Secret is removed", func() error {
		return checkStatus(t, carol, url, http.StatusNotFound)
	})
	e.waitEvent("mtls", "InvalidAnnotation")
}
