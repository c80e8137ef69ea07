package kube

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// The kinds every input reads: the backends of routes.
const (
	services       snapshot.Kind = "Services"
	endpointSlices snapshot.Kind = "EndpointSlices"
)

// kindInformer says how a kind is watched.
type kindInformer struct {
	// informer makes the kind's informer on the Watch's factories.
	informer func(w *Watch) cache.SharedIndexInformer
	// clusterScoped kinds are watched cluster-wide whatever the namespace.
	clusterScoped bool
	// gatewayAPI kinds need the Gateway API client.
	gatewayAPI bool
	// changed reports the updates translation can see.
	changed func(old, new any) bool
}

// kindInformers are the kinds a Watch can watch.
var kindInformers = map[snapshot.Kind]kindInformer{
	services: {informer: func(w *Watch) cache.SharedIndexInformer { return w.factory.Core().V1().Services().Informer() },
		changed: changedUpdate},
	endpointSlices: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.factory.Discovery().V1().EndpointSlices().Informer()
	}, changed: changedUpdate},
	snapshot.IngressClasses: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.factory.Networking().V1().IngressClasses().Informer()
	}, clusterScoped: true, changed: changedUpdate},
	snapshot.Ingresses: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.factory.Networking().V1().Ingresses().Informer()
	}, changed: ingressUpdate},
	snapshot.Namespaces: {informer: func(w *Watch) cache.SharedIndexInformer { return w.factory.Core().V1().Namespaces().Informer() },
		clusterScoped: true, changed: labelsUpdate},
	snapshot.GatewayClasses: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.gatewayFactory.Gateway().V1().GatewayClasses().Informer()
	}, clusterScoped: true, gatewayAPI: true, changed: specUpdate},
	snapshot.Gateways: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.gatewayFactory.Gateway().V1().Gateways().Informer()
	}, gatewayAPI: true, changed: specUpdate},
	snapshot.HTTPRoutes: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.gatewayFactory.Gateway().V1().HTTPRoutes().Informer()
	}, gatewayAPI: true, changed: specUpdate},
	snapshot.GRPCRoutes: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.gatewayFactory.Gateway().V1().GRPCRoutes().Informer()
	}, gatewayAPI: true, changed: specUpdate},
	snapshot.ReferenceGrants: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.gatewayFactory.Gateway().V1().ReferenceGrants().Informer()
	}, gatewayAPI: true, changed: specUpdate},
	snapshot.BackendTLSPolicies: {informer: func(w *Watch) cache.SharedIndexInformer {
		return w.gatewayFactory.Gateway().V1().BackendTLSPolicies().Informer()
	}, gatewayAPI: true, changed: specUpdate},
}

// watchesGatewayAPI reports whether one of kinds is a Gateway API kind.
func watchesGatewayAPI(kinds []snapshot.Kind) bool {
	for _, k := range kinds {
		if kindInformers[k].gatewayAPI {
			return true
		}
	}
	return false
}

// specUpdate reports an update of a custom resource that translation can
// see: its generation (the spec), labels or annotations changed. The
// statuses the leader writes cause no rebuild.
func specUpdate(old, new any) bool {
	o, okOld := old.(metav1.Object)
	n, okNew := new.(metav1.Object)
	if !okOld || !okNew {
		return true
	}
	if o.GetResourceVersion() == n.GetResourceVersion() {
		return false
	}
	return o.GetGeneration() != n.GetGeneration() || !maps.Equal(o.GetLabels(), n.GetLabels()) ||
		!maps.Equal(o.GetAnnotations(), n.GetAnnotations())
}

// labelsUpdate reports an update of a Namespace's labels, which the
// Gateway API's namespace selectors read.
func labelsUpdate(old, new any) bool {
	o, okOld := old.(metav1.Object)
	n, okNew := new.(metav1.Object)
	return !okOld || !okNew || !maps.Equal(o.GetLabels(), n.GetLabels())
}
