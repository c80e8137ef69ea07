// Package snapshot is an immutable view of the Kubernetes objects the
// controller translates: the objects of each enabled input (IngressClasses
// and Ingresses; GatewayClasses, Gateways, routes, ReferenceGrants and
// BackendTLSPolicies), the Services and EndpointSlices they route to, and
// the Secrets and ConfigMaps they reference, indexed for the lookups
// translation makes. The
// controller builds one from its informers' caches for each rebuild; the
// translate command builds one from manifest files. Translation never
// changes it.
package snapshot

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Key names a namespaced object.
type Key struct{ Namespace, Name string }

// String is "namespace/name".
func (k Key) String() string { return k.Namespace + "/" + k.Name }

// ParseKey parses "namespace/name".
func ParseKey(s string) (Key, bool) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return Key{}, false
	}
	return Key{Namespace: ns, Name: name}, true
}

// Snapshot holds the objects of one rebuild.
type Snapshot struct {
	IngressClasses map[string]*networkingv1.IngressClass
	Ingresses      []*networkingv1.Ingress
	Services       map[Key]*corev1.Service
	// EndpointSlices are indexed by the Service they belong to (the label
	// kubernetes.io/service-name).
	EndpointSlices map[Key][]*discoveryv1.EndpointSlice
	Secrets        map[Key]*corev1.Secret
	ConfigMaps     map[Key]*corev1.ConfigMap
	// Namespaces are the namespaces by name, for the Gateway API's
	// namespace selectors (empty when that input is off).
	Namespaces map[string]*corev1.Namespace

	// The Gateway API input's objects (empty when it is off).
	GatewayClasses     map[string]*gatewayv1.GatewayClass
	Gateways           []*gatewayv1.Gateway
	HTTPRoutes         []*gatewayv1.HTTPRoute
	GRPCRoutes         []*gatewayv1.GRPCRoute
	ReferenceGrants    []*gatewayv1.ReferenceGrant
	BackendTLSPolicies []*gatewayv1.BackendTLSPolicy
}

// Refs are the objects the translation of an object reads besides itself
// and its Services: the controller reads and keeps these Secrets and
// ConfigMaps only.
type Refs struct {
	Secrets, ConfigMaps []Key
}

// New returns an empty snapshot.
func New() *Snapshot {
	return &Snapshot{
		IngressClasses: map[string]*networkingv1.IngressClass{},
		Services:       map[Key]*corev1.Service{},
		EndpointSlices: map[Key][]*discoveryv1.EndpointSlice{},
		Secrets:        map[Key]*corev1.Secret{},
		ConfigMaps:     map[Key]*corev1.ConfigMap{},
		Namespaces:     map[string]*corev1.Namespace{},
		GatewayClasses: map[string]*gatewayv1.GatewayClass{},
	}
}

// Add puts an object in the snapshot; objects of other kinds are ignored
// and reported false.
func (s *Snapshot) Add(obj any) bool {
	switch o := obj.(type) {
	case *networkingv1.IngressClass:
		s.IngressClasses[o.Name] = o
	case *networkingv1.Ingress:
		s.Ingresses = append(s.Ingresses, o)
	case *corev1.Service:
		s.Services[Key{o.Namespace, o.Name}] = o
	case *discoveryv1.EndpointSlice:
		svc := o.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			return false
		}
		k := Key{o.Namespace, svc}
		s.EndpointSlices[k] = append(s.EndpointSlices[k], o)
	case *corev1.Secret:
		s.Secrets[Key{o.Namespace, o.Name}] = o
	case *corev1.ConfigMap:
		s.ConfigMaps[Key{o.Namespace, o.Name}] = o
	case *corev1.Namespace:
		s.Namespaces[o.Name] = o
	case *gatewayv1.GatewayClass:
		s.GatewayClasses[o.Name] = o
	case *gatewayv1.Gateway:
		s.Gateways = append(s.Gateways, o)
	case *gatewayv1.HTTPRoute:
		s.HTTPRoutes = append(s.HTTPRoutes, o)
	case *gatewayv1.GRPCRoute:
		s.GRPCRoutes = append(s.GRPCRoutes, o)
	case *gatewayv1.ReferenceGrant:
		s.ReferenceGrants = append(s.ReferenceGrants, o)
	case *gatewayv1.BackendTLSPolicy:
		s.BackendTLSPolicies = append(s.BackendTLSPolicies, o)
	default:
		return false
	}
	return true
}

// AddAll adds objects of one kind, as an informer's cache lists them,
// sizing the snapshot's map or list for them first (a snapshot of a large
// cluster is built for every rebuild). Objects of other kinds are ignored.
func (s *Snapshot) AddAll(objs []any) {
	if len(objs) == 0 {
		return
	}
	n := len(objs)
	switch objs[0].(type) {
	case *corev1.Service:
		s.Services = grown(s.Services, n)
	case *discoveryv1.EndpointSlice:
		s.EndpointSlices = grown(s.EndpointSlices, n)
	case *corev1.Secret:
		s.Secrets = grown(s.Secrets, n)
	case *networkingv1.Ingress:
		s.Ingresses = slices.Grow(s.Ingresses, n)
	case *gatewayv1.HTTPRoute:
		s.HTTPRoutes = slices.Grow(s.HTTPRoutes, n)
	}
	for _, o := range objs {
		s.Add(o)
	}
}

// grown returns m, or an empty map sized for n entries when m is empty.
func grown[K comparable, V any](m map[K]V, n int) map[K]V {
	if len(m) > 0 {
		return m
	}
	return make(map[K]V, n)
}

// Sort orders the lists of objects by namespace and name and each
// Service's EndpointSlices by name, so that translation does not depend on
// the order objects arrived in.
func (s *Snapshot) Sort() {
	sortByKey(s.Ingresses)
	sortByKey(s.Gateways)
	sortByKey(s.HTTPRoutes)
	sortByKey(s.GRPCRoutes)
	sortByKey(s.ReferenceGrants)
	sortByKey(s.BackendTLSPolicies)
	for _, slices_ := range s.EndpointSlices {
		slices.SortFunc(slices_, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	}
}

// sortByKey orders objects by namespace, then name.
func sortByKey[T interface {
	GetNamespace() string
	GetName() string
}](objs []T) {
	slices.SortFunc(objs, func(a, b T) int {
		if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
}

// Secret returns the data of a Secret and whether it exists (for
// annotation families).
func (s *Snapshot) Secret(namespace, name string) (map[string][]byte, bool) {
	sec := s.Secrets[Key{namespace, name}]
	if sec == nil {
		return nil, false
	}
	return sec.Data, true
}

// ConfigMap returns the data of a ConfigMap and whether it exists (for
// annotation families).
func (s *Snapshot) ConfigMap(namespace, name string) (map[string]string, bool) {
	cm := s.ConfigMaps[Key{namespace, name}]
	if cm == nil {
		return nil, false
	}
	return cm.Data, true
}
