package ingress

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Referenced are the Secrets and ConfigMaps the translation of an Ingress
// reads: its TLS Secrets and those its annotations name (basic auth, TLS
// to members, headers for external authentication). The controller keeps
// the data of these objects only.
func Referenced(ing *networkingv1.Ingress) snapshot.Refs {
	var refs snapshot.Refs
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" {
			refs.Secrets = append(refs.Secrets, snapshot.Key{Namespace: ing.Namespace, Name: t.SecretName})
		}
	}
	for _, name := range registry.Refs(registry.Secret, ing.Namespace, ing.Annotations) {
		refs.Secrets = append(refs.Secrets, snapshot.Key{Namespace: ing.Namespace, Name: name})
	}
	for _, name := range registry.Refs(registry.ConfigMap, ing.Namespace, ing.Annotations) {
		refs.ConfigMaps = append(refs.ConfigMaps, snapshot.Key{Namespace: ing.Namespace, Name: name})
	}
	return refs
}

// ServedRefs are the Referenced objects of an Ingress this controller
// serves (its class is ours, by the IngressClasses of snap); none for the
// Ingresses of other controllers, whose Secrets (often TLS keys of a whole
// cluster during a migration) are neither read nor kept.
func ServedRefs(snap *snapshot.Snapshot, ing *networkingv1.Ingress, opts Options) snapshot.Refs {
	if ours, _, _ := selectClass(snap, ing, opts); !ours {
		return snapshot.Refs{}
	}
	return Referenced(ing)
}
