package controller

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// TestSSLPassthrough: under --enable-ssl-passthrough, an Ingress with
// ssl-passthrough: "true" whose path / goes to a member serving TLS itself,
// with a certificate of its own CA for the host. A client trusting only
// that CA reaches the member over Ramjet's HTTPS listener (the member's
// certificate is served, not one of Ramjet's); the client certificate it
// presents reaches the member, which sees its subject. On the same
// listener a host with a TLS Secret is still terminated by ramjetd, with
// the Secret's certificate. The plain-HTTP rules of the passthrough host
// (another Ingress's path /plain) are served as usual. A spliced
// connection outlives a reload of ramjetd's configuration, and new ones
// follow the Service's endpoints.
func TestSSLPassthrough(t *testing.T) {
	e := newEnv(t)
	pt, term := e.host("pt"), e.host("term")
	backendCA, clientCA, ca := newCA(t, "passthrough member CA"), newCA(t, "client CA"), newCA(t, "ramjet e2e CA")
	certPEM, keyPEM := backendCA.issue(t, pt)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	member := e.network.TLSBackend(t, "secure", clientSubjectEcho("secure"), &tls.Config{
		Certificates: []tls.Certificate{cert}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: clientCA.Pool,
	})
	if _, err := cluster.Client.CoreV1().Services(e.ns).Create(e.ctx, harness.Service(e.ns, "secure", 80, harness.TLSBackendPort), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, harness.EndpointSlice(e.ns, "secure", harness.TLSBackendPort, member.IP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.service("web", e.backend("web"))
	termCert, termKey := ca.issue(t, term)
	if _, err := cluster.Client.CoreV1().Secrets(e.ns).Create(e.ctx, e.tlsSecret("term-tls", termCert, termKey), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.startRamjet("--enable-ssl-passthrough")
	e.create(e.ingress("pt", pt, "secure", map[string]string{"nginx.ingress.kubernetes.io/ssl-passthrough": "true"}))
	plain := e.ingress("pt-plain", pt, "web", nil)
	plain.Spec.Rules[0].HTTP.Paths[0].Path = "/plain"
	e.create(plain)
	terminated := e.ingress("term", term, "web", nil)
	terminated.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{term}, SecretName: "term-tls"}}
	e.create(terminated)

	trustsMember := r.Client(&tls.Config{RootCAs: backendCA.Pool})
	eventually(t, wait, "https://"+pt+"/ reaches the member, with its certificate", func() error {
		return checkPassthrough(t, trustsMember, "https://"+pt+"/", "")
	})
	withCert := r.Client(&tls.Config{RootCAs: backendCA.Pool, Certificates: []tls.Certificate{clientOf(t, clientCA, "alice")}})
	if err := checkPassthrough(t, withCert, "https://"+pt+"/whoami", "alice"); err != nil {
		t.Errorf("with a client certificate: %v", err)
	}

	trustsRamjet := r.Client(&tls.Config{RootCAs: ca.Pool})
	expect(t, trustsRamjet, "https://"+term+"/", "web")
	a, err := get(t.Context(), trustsRamjet, "https://"+term+"/")
	if err != nil {
		t.Fatal(err)
	}
	if cn, issuer, err := peer(a); err != nil || cn != term || issuer != "ramjet e2e CA" {
		t.Errorf("https://%s: certificate CN %q issued by %q (%v), want the Secret's", term, cn, issuer, err)
	}
	if _, err := get(t.Context(), trustsRamjet, "https://"+pt+"/"); err == nil {
		t.Errorf("https://%s: a client trusting only Ramjet's Secrets' CA accepted the certificate: the connection was not passed through", pt)
	}

	expect(t, r.Client(nil), "http://"+pt+"/plain", "web")

	// A spliced connection outlives a reload of ramjetd's configuration.
	conn, err := tls.Dial("tcp", r.HTTPS, &tls.Config{ServerName: pt, RootCAs: backendCA.Pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reader := bufio.NewReader(conn)
	if err := exchange(conn, reader, pt); err != nil {
		t.Fatalf("a kept-alive passthrough connection: %v", err)
	}
	before := mustGeneration(t, r)
	e.create(e.ingress("other", e.host("other"), "web", nil))
	expect(t, r.Client(nil), "http://"+e.host("other")+"/", "web")
	if mustGeneration(t, r) == before {
		t.Fatal("creating the Ingress other did not reload ramjetd")
	}
	if err := exchange(conn, reader, pt); err != nil {
		t.Errorf("the passthrough connection, after a reload: %v", err)
	}

	// The Service's endpoints move to another member: new connections
	// follow.
	moved := e.network.TLSBackend(t, "moved", clientSubjectEcho("moved"), &tls.Config{Certificates: []tls.Certificate{cert}})
	api := cluster.Client.DiscoveryV1().EndpointSlices(e.ns)
	slice, err := api.Get(e.ctx, "secure", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slice.Endpoints = harness.EndpointSlice(e.ns, "secure", harness.TLSBackendPort, moved.IP).Endpoints
	if _, err := api.Update(e.ctx, slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "new passthrough connections reach the member the endpoints moved to", func() error {
		a, err := get(t.Context(), trustsMember, "https://"+pt+"/")
		if err == nil && (a.status != http.StatusOK || a.backend != "moved") {
			err = fmt.Errorf("got %s, want 200 from the member moved", a)
		}
		return err
	})
}

// exchange sends GET / for host on a kept-alive connection and checks that
// the TLS member secure answers 200.
func exchange(conn net.Conn, reader *bufio.Reader, host string) error {
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		return err
	}
	resp, err := http.ReadResponse(reader, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Backend") != "secure" {
		return fmt.Errorf("%d from %q, want 200 from the member secure", resp.StatusCode, resp.Header.Get("X-Backend"))
	}
	return nil
}

// checkPassthrough returns an error unless GET url through client is
// answered 200 by the TLS member secure, whose certificate the client
// verified (issued by the member's CA), the member having seen the client
// certificate subject (none when empty).
func checkPassthrough(t *testing.T, client *http.Client, url, subject string) error {
	a, err := get(t.Context(), client, url)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK || a.backend != "secure" {
		return fmt.Errorf("got %s, want 200 from the member secure", a)
	}
	if _, issuer, err := peer(a); err != nil || issuer != "passthrough member CA" {
		return fmt.Errorf("certificate issued by %q (%v), want the member's CA", issuer, err)
	}
	if got := a.header.Get("X-Client-Subject"); got != subject {
		return fmt.Errorf("the member saw the client certificate %q, want %q", got, subject)
	}
	return nil
}

// clientSubjectEcho is a TLS member named name that answers the common
// name of the client certificate it verified in X-Client-Subject.
func clientSubjectEcho(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", name)
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
			w.Header().Set("X-Client-Subject", r.TLS.VerifiedChains[0][0].Subject.CommonName)
		}
	})
}

// TestSSLPassthroughOff: without --enable-ssl-passthrough, as in
// ingress-nginx, ssl-passthrough: "true" is ignored with an
// UnknownAnnotation Event naming the flag, and ramjetd terminates the
// host's TLS itself (its default certificate, not the member's).
func TestSSLPassthroughOff(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	r := e.startRamjet()
	pt := e.host("pt")
	e.create(e.ingress("pt", pt, "web", map[string]string{"nginx.ingress.kubernetes.io/ssl-passthrough": "true"}))
	insecure := r.Client(nil)
	expect(t, insecure, "https://"+pt+"/", "web")
	a, err := get(t.Context(), insecure, "https://"+pt+"/")
	if err != nil {
		t.Fatal(err)
	}
	if cn, _, err := peer(a); err != nil || cn != certs.FakeCommonName {
		t.Errorf("https://%s: certificate CN %q (%v), want ramjetd's default (CN %q)", pt, cn, err, certs.FakeCommonName)
	}
	if ev := e.waitEvent("pt", "UnknownAnnotation"); !strings.Contains(ev.Note, "--enable-ssl-passthrough") {
		t.Errorf("the Event says %q, want it to name --enable-ssl-passthrough", ev.Note)
	}
}
