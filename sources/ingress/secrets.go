package ingress

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// ReferencedSecrets are the Secrets the translation of an Ingress reads:
// its TLS Secrets and those its annotations name (basic auth, TLS to
// members). The controller keeps the data of these Secrets only.
func ReferencedSecrets(ing *networkingv1.Ingress) []snapshot.Key {
	var keys []snapshot.Key
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" {
			keys = append(keys, snapshot.Key{Namespace: ing.Namespace, Name: t.SecretName})
		}
	}
	for _, name := range registry.SecretRefs(ing.Namespace, ing.Annotations) {
		keys = append(keys, snapshot.Key{Namespace: ing.Namespace, Name: name})
	}
	return keys
}
