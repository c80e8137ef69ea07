package controller

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAnnotationDefaults: --annotation-default ssl-redirect=false (as
// ingress-nginx's ConfigMap ssl-redirect: "false") leaves the plain-HTTP
// requests of a TLS host without the annotation unredirected, while an
// Ingress that says ssl-redirect: "true" keeps its 308.
func TestAnnotationDefaults(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	ca := newCA(t, "ramjet e2e CA")
	cert, key := ca.issue(t, e.host("plain"), e.host("own"))
	if _, err := cluster.Client.CoreV1().Secrets(e.ns).Create(e.ctx, e.tlsSecret("site-tls", cert, key), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.startRamjet("--annotation-default=ssl-redirect=false")
	client := r.Client(nil)
	for name, annotations := range map[string]map[string]string{
		"plain": nil,
		"own":   {"nginx.ingress.kubernetes.io/ssl-redirect": "true"},
	} {
		ing := e.ingress(name, e.host(name), "web", annotations)
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{e.host(name)}, SecretName: "site-tls"}}
		e.create(ing)
	}
	expect(t, client, "https://"+e.host("plain")+"/", "web")
	expect(t, client, "https://"+e.host("own")+"/", "web")
	expect(t, client, "http://"+e.host("plain")+"/a", "web")
	if err := checkRedirect(t, client, "http://"+e.host("own")+"/a", "https://"+e.host("own")+"/a"); err != nil {
		t.Error(err)
	}
}
