package ingress

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// tls translates spec.tls: each entry's Secret is loaded from the
// Ingress's namespace with the data plane's certificate loader; an entry
// whose Secret is missing or unusable still makes its hosts TLS hosts,
// served with the default certificate (as in ingress-nginx).
func (t *translation) tls() {
	for _, entry := range t.ing.Spec.TLS {
		if len(entry.Hosts) == 0 {
			continue
		}
		out := core.TLS{Hosts: entry.Hosts, Secret: entry.SecretName}
		if entry.SecretName == "" {
			out.Problem = "no Secret is named"
		} else {
			out.Cert, out.Problem = LoadTLSSecret(t.snap, snapshot.Key{Namespace: t.ing.Namespace, Name: entry.SecretName})
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
