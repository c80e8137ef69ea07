package controller

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
)

// TestHTTPSRedirectKeys: the 308 of plain-HTTP requests to TLS hosts drops
// one trailing slash by default (as ingress-nginx), keeps it with
// preserve-trailing-slash: "true", and names port 443 with
// use-port-in-redirects: "true".
func TestHTTPSRedirectKeys(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	ca := newCA(t, "ramjet e2e CA")
	hosts := map[string]map[string]string{
		"default": nil,
		"slash":   {"nginx.ingress.kubernetes.io/preserve-trailing-slash": "true"},
		"port":    {"nginx.ingress.kubernetes.io/use-port-in-redirects": "true"},
	}
	var names []string
	for name := range hosts {
		names = append(names, e.host(name))
	}
	cert, key := ca.issue(t, names...)
	if _, err := cluster.Client.CoreV1().Secrets(e.ns).Create(e.ctx, e.tlsSecret("site-tls", cert, key), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.startRamjet()
	client := r.Client(nil)
	for name, annotations := range hosts {
		ing := e.ingress(name, e.host(name), "web", annotations)
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{e.host(name)}, SecretName: "site-tls"}}
		e.create(ing)
	}
	for name := range hosts {
		expect(t, client, "https://"+e.host(name)+"/", "web")
	}

	for _, tc := range []struct {
		host, path, want string // want: the Location after https://host
	}{
		{"default", "/a/", "/a"},
		{"default", "/", ""},
		{"default", "/a/?q=1", "/a/?q=1"},
		{"default", "/a/b", "/a/b"},
		{"slash", "/a/", "/a/"},
		{"slash", "/", "/"},
		{"port", "/a", ":443/a"},
		{"port", "/a/", ":443/a"},
	} {
		t.Run(tc.host+tc.path, func(t *testing.T) {
			want := "https://" + e.host(tc.host) + tc.want
			if err := checkRedirect(t, client, "http://"+e.host(tc.host)+tc.path, want); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkRedirect returns an error unless GET url through client is answered
// 308 to location by ramjetd.
func checkRedirect(t *testing.T, client *http.Client, url, location string) error {
	a, err := get(t.Context(), client, url)
	switch {
	case err != nil:
		return err
	case a.status != http.StatusPermanentRedirect || a.backend != "" || a.header.Get("Location") != location:
		return fmt.Errorf("GET %s: %s, Location %q; want 308 to %s", url, a, a.header.Get("Location"), location)
	}
	return nil
}

// TestUnlistedTLSHosts: an Ingress with a tls section listing one of its
// three rule hosts. The rule host its Secret's certificate also covers is
// served with that certificate (a client trusting the CA verifies it for
// that name); the one it does not cover gets ramjetd's default certificate
// and a TLSSecret Event; both are TLS hosts, their plain-HTTP requests
// redirected to HTTPS, as ingress-nginx does.
func TestUnlistedTLSHosts(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	ca := newCA(t, "ramjet e2e CA")
	listed, covered, stranger := e.host("listed"), e.host("covered"), e.host("stranger")
	cert, key := ca.issue(t, listed, covered)
	if _, err := cluster.Client.CoreV1().Secrets(e.ns).Create(e.ctx, e.tlsSecret("site-tls", cert, key), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.startRamjet()
	ing := e.ingress("site", listed, "web", nil)
	for _, host := range []string{covered, stranger} {
		rule := *ing.Spec.Rules[0].DeepCopy()
		rule.Host = host
		ing.Spec.Rules = append(ing.Spec.Rules, rule)
	}
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{listed}, SecretName: "site-tls"}}
	e.create(ing)

	verifying := r.Client(&tls.Config{RootCAs: ca.Pool})
	for _, host := range []string{listed, covered} {
		expect(t, verifying, "https://"+host+"/", "web")
	}
	insecure := r.Client(nil)
	expect(t, insecure, "https://"+stranger+"/", "web")
	a, err := get(t.Context(), insecure, "https://"+stranger+"/")
	if err != nil {
		t.Fatal(err)
	}
	if cn, _, err := peer(a); err != nil || cn != certs.FakeCommonName {
		t.Errorf("https://%s: certificate CN %q (%v), want the default one (CN %q)", stranger, cn, err, certs.FakeCommonName)
	}
	if _, err := get(t.Context(), verifying, "https://"+stranger+"/"); err == nil {
		t.Errorf("https://%s: the verifying client accepted the certificate", stranger)
	}
	for _, host := range []string{listed, covered, stranger} {
		if err := checkRedirect(t, insecure, "http://"+host+"/cart?id=7", "https://"+host+"/cart?id=7"); err != nil {
			t.Error(err)
		}
	}
	e.waitEvent("site", "TLSSecret")
}
