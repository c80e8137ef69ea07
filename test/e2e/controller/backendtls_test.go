package controller

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// TestBackendTLSVerifyAlways and TestBackendTLSVerifyAnnotated: a real
// member serving HTTPS with a certificate of a private CA for
// backend.internal (as a pod would), reached by four Ingresses with
// backend-protocol: HTTPS. Under --backend-tls-verify=always (the default)
// only the Ingress naming the CA and the name is served; the others answer
// 502, and get a BackendTLS Event naming the fix. Under annotated, as
// ingress-nginx, only the Ingress saying proxy-ssl-verify: "on" is
// verified: the others are served unverified, and "on" without a CA still
// answers 502 with the Event.
func TestBackendTLSVerifyAlways(t *testing.T) {
	testBackendTLSVerify(t, "always", map[string]int{bare: 502, verified: 200, off: 502, on: 502}, bare, off, on)
}

func TestBackendTLSVerifyAnnotated(t *testing.T) {
	testBackendTLSVerify(t, "annotated", map[string]int{bare: 200, verified: 200, off: 200, on: 502}, on)
}

// The Ingresses of the backend TLS tests.
const (
	bare     = "bare"     // backend-protocol only: most real Ingresses
	verified = "verified" // with proxy-ssl-secret (ca.crt) and proxy-ssl-name
	off      = "off"      // proxy-ssl-verify: "off"
	on       = "on"       // proxy-ssl-verify: "on" without a Secret
)

// testBackendTLSVerify runs a controller with --backend-tls-verify=mode and
// checks the status each Ingress answers (want) and which get a BackendTLS
// Event (events).
func testBackendTLSVerify(t *testing.T, mode string, want map[string]int, events ...string) {
	e := newEnv(t)
	ca := newCA(t, "backend CA")
	certPEM, keyPEM := ca.issue(t, "backend.internal")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	member := e.network.TLSBackend(t, "member", nil, &tls.Config{Certificates: []tls.Certificate{cert}})
	if _, err := cluster.Client.CoreV1().Services(e.ns).Create(e.ctx, harness.Service(e.ns, "secure", 80, harness.TLSBackendPort), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, harness.EndpointSlice(e.ns, "secure", harness.TLSBackendPort, member.IP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "backend-ca"}, Data: map[string][]byte{"ca.crt": ca.PEM}}
	if _, err := cluster.Client.CoreV1().Secrets(e.ns).Create(e.ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const prefix = "nginx.ingress.kubernetes.io/"
	annotations := map[string]map[string]string{
		bare:     {prefix + "backend-protocol": "HTTPS"},
		verified: {prefix + "backend-protocol": "HTTPS", prefix + "proxy-ssl-secret": "backend-ca", prefix + "proxy-ssl-name": "backend.internal", prefix + "proxy-ssl-verify": "on"},
		off:      {prefix + "backend-protocol": "HTTPS", prefix + "proxy-ssl-verify": "off"},
		on:       {prefix + "backend-protocol": "HTTPS", prefix + "proxy-ssl-verify": "on"},
	}
	r := e.startRamjet("--backend-tls-verify=" + mode)
	client := r.Client(nil)
	for name, a := range annotations {
		e.create(e.ingress(name, e.host(name), "secure", a))
	}
	for name, status := range want {
		url := "http://" + e.host(name) + "/"
		eventually(t, wait, fmt.Sprintf("GET %s answers %d", url, status), func() error {
			ans, err := get(t.Context(), client, url)
			if err != nil {
				return err
			}
			if ans.status != status || status == http.StatusOK && ans.backend != "member" {
				return fmt.Errorf("got %v", ans)
			}
			return nil
		})
	}
	for _, name := range events {
		ev := e.waitEvent(name, "BackendTLS")
		for _, part := range []string{"Service " + e.ns + "/secure", "502", "proxy-ssl-secret", "proxy-ssl-name"} {
			if !strings.Contains(ev.Note, part) {
				t.Errorf("the BackendTLS Event of %s says %q; want it to hold %q", name, ev.Note, part)
			}
		}
	}
	// The Ingresses served as written have no BackendTLS Event (one
	// rebuild's Events are written together, so they are there by now).
	for name := range want {
		if slices.Contains(events, name) {
			continue
		}
		list, err := e.events(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range list {
			if ev.Reason == "BackendTLS" {
				t.Errorf("Ingress %s has a BackendTLS Event under --backend-tls-verify=%s: %s", name, mode, ev.Note)
			}
		}
	}
}
