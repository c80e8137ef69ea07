package ingress

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// tls translates spec.tls: each entry's Secret is loaded from the
// Ingress's namespace with the data plane's certificate loader; an entry
// whose Secret is missing or unusable still makes its hosts TLS hosts,
// served with the default certificate (as in ingress-nginx).
//
// An Ingress with a tls section makes its other rule hosts TLS hosts too,
// as ingress-nginx does: each takes the first Secret of its entries whose
// certificate covers the name, or else the default certificate (see
// unlistedTLS).
func (t *translation) tls() {
	listed := map[string]bool{}
	loaded := make([]core.TLS, len(t.ing.Spec.TLS))
	for i, entry := range t.ing.Spec.TLS {
		out := core.TLS{Hosts: entry.Hosts, Secret: entry.SecretName}
		if entry.SecretName == "" {
			out.Problem = "no Secret is named"
		} else {
			out.Cert, out.Problem = LoadTLSSecret(t.snap, snapshot.Key{Namespace: t.ing.Namespace, Name: entry.SecretName})
		}
		loaded[i] = out
		for _, h := range entry.Hosts {
			listed[strings.ToLower(h)] = true
		}
		if len(entry.Hosts) > 0 {
			t.c.TLS = append(t.c.TLS, out)
		}
	}
	if len(loaded) > 0 {
		t.unlistedTLS(listed, loaded)
	}
}

// unlistedTLS makes each rule host that no tls entry lists a TLS host, as
// ingress-nginx does for an Ingress with a tls section: the host takes the
// certificate of the first entry whose Secret covers it (its DNS names, as
// Go's hostname check that ingress-nginx uses), or else the default
// certificate; either way its HTTP requests are redirected to HTTPS
// (ssl-redirect). Rules without a host are the catch-all's, which serves
// the default certificate anyway.
func (t *translation) unlistedTLS(listed map[string]bool, loaded []core.TLS) {
	for _, r := range t.ing.Spec.Rules {
		host := strings.ToLower(r.Host)
		if host == "" || listed[host] {
			continue
		}
		listed[host] = true
		out := core.TLS{Hosts: []string{r.Host}, Unlisted: true, Problem: "no Secret of the object covers it"}
		for _, entry := range loaded {
			if entry.Cert != nil && certs.Covers(entry.Cert.Parsed, r.Host) == nil {
				out.Secret, out.Cert, out.Problem = entry.Secret, entry.Cert, ""
				break
			}
		}
		t.c.TLS = append(t.c.TLS, out)
	}
}

// LoadTLSSecret loads a kubernetes.io/tls Secret as a certificate, or says
// why it cannot be used. The reason never holds Secret data.
func LoadTLSSecret(snap *snapshot.Snapshot, key snapshot.Key) (*core.Certificate, string) {
	sec := snap.Secrets[key]
	switch {
	case sec == nil:
		return nil, "the Secret does not exist"
	case sec.Type != corev1.SecretTypeTLS:
		return nil, fmt.Sprintf("the Secret is of type %s, not %s", core.Quote(string(sec.Type)), corev1.SecretTypeTLS)
	}
	crt, key_ := sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey]
	parsed, err := certs.LoadNamed(corev1.TLSCertKey, crt, corev1.TLSPrivateKeyKey, key_)
	if err != nil {
		return nil, err.Error()
	}
	return &core.Certificate{CertPEM: crt, KeyPEM: key_, Parsed: parsed}, ""
}
