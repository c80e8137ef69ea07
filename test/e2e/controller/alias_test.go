package controller

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
)

// TestServerAliasAndWWWRedirect: an Ingress with server-alias and
// from-to-www-redirect on a TLS host. The alias its certificate covers is
// served with it, the other with the fake certificate, both by the host's
// backend and with its HTTPS redirect; the www. twin answers 308 to the
// host over plain HTTP and HTTPS (with the host's certificate, which covers
// it), keeping the scheme, the listener's port and the path and query less
// one trailing slash. A host created later for an alias name takes it back.
func TestServerAliasAndWWWRedirect(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	e.service("next", e.backend("next"))
	ca := newCA(t, "ramjet e2e CA")
	apex, alias, uncovered := e.host("apex"), e.host("alias"), e.host("other")
	www := "www." + apex
	cert, key := ca.issue(t, apex, www, alias)
	if _, err := cluster.Client.CoreV1().Secrets(e.ns).Create(t.Context(), e.tlsSecret("apex-tls", cert, key), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.startRamjet()
	ing := e.ingress("apex", apex, "web", map[string]string{
		"nginx.ingress.kubernetes.io/server-alias":         alias + ", " + uncovered,
		"nginx.ingress.kubernetes.io/from-to-www-redirect": "true",
	})
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{apex}, SecretName: "apex-tls"}}
	e.create(ing)

	verifying := r.Client(&tls.Config{RootCAs: ca.Pool})
	insecure := r.Client(nil)
	expect(t, verifying, "https://"+apex+"/", "web")
	expect(t, verifying, "https://"+alias+"/", "web")
	expect(t, insecure, "https://"+uncovered+"/", "web")
	a, err := get(t.Context(), insecure, "https://"+uncovered+"/")
	if err != nil {
		t.Fatal(err)
	}
	if cn, _, err := peer(a); err != nil || cn != certs.FakeCommonName {
		t.Errorf("https://%s: certificate CN %q (%v), want the fake one", uncovered, cn, err)
	}
	e.waitEvent("apex", "TLSSecret")
	expect308(t, insecure, "http://"+alias+"/cart?id=7", "https://"+alias+"/cart?id=7")
	expect308(t, insecure, "http://"+uncovered+"/", "https://"+uncovered)

	_, httpPort, _ := net.SplitHostPort(r.HTTP)
	_, httpsPort, _ := net.SplitHostPort(r.HTTPS)
	expect308(t, insecure, "http://"+www+"/shop/", fmt.Sprintf("http://%s:%s/shop", apex, httpPort))
	expect308(t, insecure, "http://"+www+"/shop/?q=1", fmt.Sprintf("http://%s:%s/shop/?q=1", apex, httpPort))
	expect308(t, verifying, "https://"+www+"/", fmt.Sprintf("https://%s:%s/", apex, httpsPort))

	// A host of its own for the alias name takes it back.
	e.create(e.ingress("taker", alias, "next", nil))
	expect(t, insecure, "http://"+alias+"/", "next")
	expect(t, verifying, "https://"+apex+"/", "web")
	e.waitEvent("apex", "PathConflict")
}

// expect308 waits until GET url is answered 308 with Location want.
func expect308(t *testing.T, client *http.Client, url, want string) {
	t.Helper()
	eventually(t, wait, "GET "+url+" redirected to "+want, func() error {
		a, err := get(t.Context(), client, url)
		switch {
		case err != nil:
			return err
		case a.status != http.StatusPermanentRedirect || a.header.Get("Location") != want:
			return fmt.Errorf("got %s, Location %q", a, a.header.Get("Location"))
		}
		return nil
	})
}
