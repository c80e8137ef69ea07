package controller

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// newCA is a certificate authority for a test.
func newCA(t testing.TB, name string) *testCA {
	t.Helper()
	ca, err := harness.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{ca}
}

// testCA issues certificates for a test and fails it on an error.
type testCA struct{ *harness.CA }

// issue returns a server certificate for hosts and its key, PEM-encoded.
func (ca *testCA) issue(t testing.TB, hosts ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

// tlsSecret returns a kubernetes.io/tls Secret.
func (e *env) tlsSecret(name string, cert, key []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	}
}

// peer returns the subject and issuer names of the leaf certificate the
// server presented.
func peer(a answer) (subject, issuer string, err error) {
	if a.response == nil || a.response.TLS == nil || len(a.response.TLS.PeerCertificates) == 0 {
		return "", "", errors.New("no TLS certificate")
	}
	leaf := a.response.TLS.PeerCertificates[0]
	return leaf.Subject.CommonName, leaf.Issuer.CommonName, nil
}

// TestTLS: a host whose Ingress names a TLS Secret gets the Secret's
// certificate (by SNI), which a client trusting the test CA verifies; a
// host whose Secret is missing or not a valid certificate, and a host no
// Ingress names, get ramjetd's fake certificate, which that client refuses;
// plain HTTP to a TLS host is redirected to HTTPS with 308.
func TestTLS(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	ca := newCA(t, "ramjet e2e CA")
	secure := e.host("secure")
	cert, key := ca.issue(t, secure)
	secrets := cluster.Client.CoreV1().Secrets(e.ns)
	if _, err := secrets.Create(t.Context(), e.tlsSecret("secure-tls", cert, key), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, otherKey := ca.issue(t, secure) // a key that does not match cert
	quiet := rest.CopyConfig(cluster.Config)
	quiet.WarningHandler = rest.NoWarnings{} // the API server warns that the key does not match
	if _, err := kubernetes.NewForConfigOrDie(quiet).CoreV1().Secrets(e.ns).Create(t.Context(), e.tlsSecret("mismatched-tls", cert, otherKey), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.startRamjet()
	withTLS := func(name, host, secret string) *networkingv1.Ingress {
		ing := e.ingress(name, host, "web", nil)
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: secret}}
		return ing
	}
	missing, mismatched := e.host("missing"), e.host("mismatched")
	e.create(withTLS("secure", secure, "secure-tls"))
	e.create(withTLS("missing", missing, "no-such-secret"))
	e.create(withTLS("mismatched", mismatched, "mismatched-tls"))

	verifying := r.Client(&tls.Config{RootCAs: ca.Pool})
	expect(t, verifying, "https://"+secure+"/", "web")
	a, err := get(t.Context(), verifying, "https://"+secure+"/")
	if err != nil {
		t.Fatal(err)
	}
	if cn, issuer, err := peer(a); err != nil || cn != secure || issuer != "ramjet e2e CA" {
		t.Errorf("https://%s: certificate CN %q issued by %q (%v), want the Secret's, CN %s issued by the test CA", secure, cn, issuer, err, secure)
	}

	// The fake certificate: the client that verifies refuses it; one that
	// does not sees its name, and the request is still served.
	insecure := r.Client(nil)
	for _, host := range []string{missing, mismatched, e.host("unnamed")} {
		if _, err := get(t.Context(), verifying, "https://"+host+"/"); err == nil {
			t.Errorf("https://%s: the verifying client accepted the certificate", host)
		}
		want := "web"
		if host == e.host("unnamed") {
			want = ""
		}
		expect(t, insecure, "https://"+host+"/", want)
		a, err := get(t.Context(), insecure, "https://"+host+"/")
		if err != nil {
			t.Fatal(err)
		}
		if cn, _, err := peer(a); err != nil || cn != certs.FakeCommonName {
			t.Errorf("https://%s: certificate CN %q (%v), want the fake one (CN %q)", host, cn, err, certs.FakeCommonName)
		}
	}
	e.waitEvent("missing", "TLSSecret")
	e.waitEvent("mismatched", "TLSSecret")

	// Plain HTTP to a host with TLS: 308 to the same URL over HTTPS.
	a, err = get(t.Context(), insecure, "http://"+secure+"/cart/items?id=7")
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://" + secure + "/cart/items?id=7"; a.status != http.StatusPermanentRedirect || a.header.Get("Location") != want {
		t.Errorf("http://%s/cart/items?id=7: %s, Location %q; want 308 to %s", secure, a, a.header.Get("Location"), want)
	}

	// A renewed certificate (the Secret updated) is served.
	renewed := newCA(t, "ramjet e2e CA 2")
	cert, key = renewed.issue(t, secure)
	if _, err := secrets.Update(t.Context(), e.tlsSecret("secure-tls", cert, key), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "https://"+secure+" served with the renewed certificate", func() error {
		a, err := get(t.Context(), insecure, "https://"+secure+"/")
		if err != nil {
			return err
		}
		if _, issuer, err := peer(a); err != nil || issuer != "ramjet e2e CA 2" {
			return fmt.Errorf("certificate issued by %q (%v)", issuer, err)
		}
		return nil
	})

	// A Secret that becomes valid is served without a restart.
	cert2, key2 := ca.issue(t, missing)
	if _, err := secrets.Create(t.Context(), e.tlsSecret("no-such-secret", cert2, key2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "https://"+missing+" served with its new Secret", func() error {
		a, err := get(t.Context(), verifying, "https://"+missing+"/")
		if err != nil {
			return err
		}
		if cn, _, err := peer(a); err != nil || cn != missing {
			return fmt.Errorf("certificate CN %q (%v)", cn, err)
		}
		return check(t.Context(), verifying, "https://"+missing+"/", "web")
	})
}
