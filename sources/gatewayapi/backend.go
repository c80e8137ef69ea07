package gatewayapi

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// The Service appProtocols a backend may have besides none.
const (
	AppProtocolH2C       = "kubernetes.io/h2c"
	AppProtocolWebSocket = "kubernetes.io/ws"
)

// Backend is one backendRef of a rule, resolved.
type Backend struct {
	// Namespace and Name name the Service, Port its port; Name is the
	// ref's name whatever its kind.
	Namespace, Name string
	Port            int32
	// Weight is the ref's weight (1 when unset); an invalid ref keeps it,
	// and its share of requests answers 500.
	Weight int32
	// Reason is why the ref is invalid ("" when it resolves), Message says
	// more; the route's ResolvedRefs condition carries the first of them.
	Reason  gatewayv1.RouteConditionReason
	Message string
	// AppProtocol is the Service port's appProtocol: "", AppProtocolH2C
	// or AppProtocolWebSocket ("http" counts as "", and so does "https",
	// whose TLS comes from the port's BackendTLSPolicy; without one the
	// backend is invalid).
	AppProtocol string
	// Members are the ready members; Problems say why some or all are
	// missing (no endpoints answer 503), as for Ingress backends.
	Members  []config.Member
	Problems []ingress.Problem
	// TLS is the BackendTLSPolicy that applies to the Service port, nil
	// for none.
	TLS *BackendTLS
	// portName is the Service port's name, for BackendTLSPolicy targets.
	portName string
}

// Valid reports whether the ref resolves to a Service port.
func (b *Backend) Valid() bool { return b.Reason == "" }

// backend resolves one backendRef of a route of the given kind and
// namespace: the ref must name a Service (InvalidKind), in the route's
// namespace or in one whose ReferenceGrant permits it (RefNotPermitted),
// that exists and has the port (BackendNotFound), whose appProtocol is
// served (UnsupportedProtocol). Members come from ingress.Resolve, so
// the address rule is the one of Ingress backends.
func (c *computation) backend(kind, namespace string, ref gatewayv1.BackendObjectReference, weight *int32) *Backend {
	b := &Backend{Namespace: namespace, Name: string(ref.Name), Weight: 1}
	if weight != nil {
		b.Weight = *weight
	}
	if ref.Namespace != nil && *ref.Namespace != "" {
		b.Namespace = string(*ref.Namespace)
	}
	if ref.Port != nil {
		b.Port = int32(*ref.Port)
	}
	group, refKind := "", "Service"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		refKind = string(*ref.Kind)
	}
	if group != "" || refKind != "Service" {
		return b.invalid(gatewayv1.RouteReasonInvalidKind, "backendRef %s %s: only Services are supported", groupKind(group, refKind), ref.Name)
	}
	key := snapshot.Key{Namespace: b.Namespace, Name: b.Name}
	if ref.Port == nil {
		return b.invalid(gatewayv1.RouteReasonBackendNotFound, "backendRef Service %s names no port", key)
	}
	if !c.grants.permits(object{Group: groupGateway, Kind: kind, Namespace: namespace}, object{Kind: "Service", Namespace: b.Namespace, Name: b.Name}) {
		return b.invalid(gatewayv1.RouteReasonRefNotPermitted, "backendRef Service %s is in another namespace and no ReferenceGrant there permits the reference", key)
	}
	svc := c.snap.Services[key]
	if svc == nil {
		return b.invalid(gatewayv1.RouteReasonBackendNotFound, "Service %s not found", key)
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		sp := servicePort(svc, b.Port)
		if sp == nil {
			return b.invalid(gatewayv1.RouteReasonBackendNotFound, "Service %s has no port %d", key, b.Port)
		}
		if !c.appProtocol(b, sp) {
			return b
		}
		b.portName = sp.Name
		b.TLS = c.policies.forPort(key, sp.Name)
		if b.TLS == nil && sp.AppProtocol != nil && strings.EqualFold(*sp.AppProtocol, "https") {
			return b.invalid(gatewayv1.RouteReasonUnsupportedProtocol, "Service %s port %d: appProtocol https needs a BackendTLSPolicy, which says how the backend's certificate is verified", key, b.Port)
		}
	}
	b.Members, b.Problems = ingress.Resolve(c.snap, key, networkingv1.ServiceBackendPort{Number: b.Port}, c.opts.Resolve)
	return b
}

// appProtocol carries the Service port's appProtocol, or marks the
// backend UnsupportedProtocol.
func (c *computation) appProtocol(b *Backend, sp *corev1.ServicePort) bool {
	if sp.AppProtocol == nil {
		return true
	}
	switch p := *sp.AppProtocol; strings.ToLower(p) {
	case "", "http", "https": // https: TLS, set by a BackendTLSPolicy (backend)
	case AppProtocolH2C, AppProtocolWebSocket:
		b.AppProtocol = p
	default:
		b.invalid(gatewayv1.RouteReasonUnsupportedProtocol, "Service %s/%s port %d: appProtocol %s is not supported (http, https with a BackendTLSPolicy, %s and %s are)",
			b.Namespace, b.Name, b.Port, core.Quote(p), AppProtocolH2C, AppProtocolWebSocket)
		return false
	}
	return true
}

func (b *Backend) invalid(reason gatewayv1.RouteConditionReason, format string, args ...any) *Backend {
	b.Reason, b.Message = reason, fmt.Sprintf(format, args...)
	return b
}

func servicePort(svc *corev1.Service, port int32) *corev1.ServicePort {
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			return &svc.Spec.Ports[i]
		}
	}
	return nil
}
