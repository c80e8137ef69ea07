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

// ServedSecrets are the ReferencedSecrets of an Ingress this controller
// serves (its class is ours, by the IngressClasses of snap); nil for the
// Ingresses of other controllers, whose Secrets (often TLS keys of a whole
// cluster during a migration) are neither read nor kept.
func ServedSecrets(snap *snapshot.Snapshot, ing *networkingv1.Ingress, opts Options) []snapshot.Key {
	if ours, _, _ := selectClass(snap, ing, opts); !ours {
		return nil
	}
	return ReferencedSecrets(ing)
}
