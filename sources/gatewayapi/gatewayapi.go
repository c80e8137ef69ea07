// Package gatewayapi is the semantic core of the Gateway API input: from a
// snapshot it decides, as the Gateway API v1 specification says, which
// GatewayClasses and Gateways are ours and valid, which routes attach to
// which listeners for which hostnames, how their backends and
// BackendTLSPolicies resolve, and in what order each listener's matches
// take precedence. It computes every status the controller writes, as the
// gatewayv1 status types. It is pure: no client, no clock, no I/O.
//
// Where the specification leaves a choice to the implementation:
//   - Listeners of protocol HTTP and HTTPS are served; each takes HTTPRoutes
//     and GRPCRoutes. A conflicted listener is Accepted=False with the
//     conflict's reason.
//   - Routes attach to a Gateway that is not accepted (attachment depends
//     on allowedRoutes and parentRefs only); nothing of it is programmed.
//   - A RegularExpression path comes after Exact paths and before
//     PathPrefix ones, longer patterns first; a RegularExpression gRPC
//     method counts no characters but comes before a match without one.
//   - A Service port's appProtocol "http" is plain HTTP, like none.
//   - Of several caCertificateRefs, the usable ones serve.
//   - Rules with ExtensionRef filters are dropped (no extension is
//     supported), so are rules with filters on a backendRef (the data
//     plane has no policies per backend), rules whose regular expressions
//     do not compile and ReplacePrefixMatch in a rule with a match that is
//     not PathPrefix.
package gatewayapi

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// DefaultControllerName is the controller name of Options' zero value.
const DefaultControllerName gatewayv1.GatewayController = "ramjet.dev/gateway"

// Options change what Compute decides.
type Options struct {
	// ControllerName selects the GatewayClasses that are ours; the zero
	// value is DefaultControllerName.
	ControllerName gatewayv1.GatewayController
	// SupportedFeatures are published in each class's status, sorted.
	SupportedFeatures []gatewayv1.FeatureName
	// Addresses are the addresses each Gateway is reachable at; a Gateway
	// without any is not Programmed (AddressNotAssigned, or AddressNotUsable
	// when its spec.addresses asks for a value).
	Addresses map[snapshot.Key][]gatewayv1.GatewayStatusAddress
	// Resolve changes how a Service port resolves to members.
	Resolve ingress.ResolveOptions
}

func (o Options) controller() gatewayv1.GatewayController {
	if o.ControllerName == "" {
		return DefaultControllerName
	}
	return o.ControllerName
}

// Result is what Compute decides: every status to write and, per listener,
// the ordered route entries to serve. Each list is sorted by namespace and
// name.
type Result struct {
	Classes  []*ClassState
	Gateways []*GatewayState
	Routes   []*RouteState
	Policies []*PolicyState
}

// ClassState is one GatewayClass of our controller.
type ClassState struct {
	Class  *gatewayv1.GatewayClass
	Status gatewayv1.GatewayClassStatus
	// Accepted is the class's Accepted condition; Gateways of a class that
	// is not accepted are not served.
	Accepted bool
}

// GatewayState is one Gateway of our classes.
type GatewayState struct {
	Gateway *gatewayv1.Gateway
	Status  gatewayv1.GatewayStatus
	// Accepted is the Gateway's Accepted condition.
	Accepted bool
	// Listeners are in the order of spec.listeners (their status is too).
	Listeners []*ListenerState
	// Routes are the routes with a parentRef to this Gateway, in the order
	// of Result.Routes.
	Routes []*RouteState
}

// ListenerState is one listener of a Gateway.
type ListenerState struct {
	Listener *gatewayv1.Listener
	// Programmed says the listener is to be served: accepted, not
	// conflicted, and (for HTTPS) with at least one usable certificate.
	Programmed bool
	// Certificates are the listener's usable certificates, in the order of
	// its certificateRefs.
	Certificates []Certificate
	// Hosts are the route tables of the listener, one per served hostname,
	// most specific hostname first (see Host).
	Hosts []*Host
}

// Host is the route table of one served hostname of a listener: the
// intersection of the listener's hostname and its routes' hostnames.
type Host struct {
	// Hostname is the served hostname; "" serves any.
	Hostname string
	// HTTP and GRPC are the matches for requests to the hostname, the one
	// that takes precedence first: those of the routes that serve this
	// hostname, then those of routes that serve a less specific hostname
	// that covers it (a wildcard, then any), each group in match
	// precedence. HTTPRoutes and GRPCRoutes are not merged.
	HTTP []HTTPEntry
	GRPC []GRPCEntry
}

// Ref names the route an entry comes from and its rule and match.
type Ref struct {
	Kind            string
	Namespace, Name string
	// Rule is the index of the rule in spec.rules; Match the index of the
	// match in the rule's matches (0 for a rule without matches, which
	// matches everything).
	Rule, Match int
	// created is the route's creationTimestamp, for precedence; uid its
	// UID.
	created time.Time
	uid     string
}

// HTTPEntry is one match of an HTTPRoute rule on a host.
type HTTPEntry struct {
	Ref
	// Match is the match with its defaults filled in (a rule without
	// matches has the match PathPrefix "/").
	Match gatewayv1.HTTPRouteMatch
	Rule  *HTTPRule
}

// GRPCEntry is one match of a GRPCRoute rule on a host.
type GRPCEntry struct {
	Ref
	// Match is the match as written; a rule without matches has the empty
	// match, which matches every request.
	Match gatewayv1.GRPCRouteMatch
	Rule  *GRPCRule
}

// HTTPRule is an HTTPRoute rule with its backends resolved.
type HTTPRule struct {
	Rule     *gatewayv1.HTTPRouteRule
	Backends []*Backend
	// Mirrors are the backends of the rule's RequestMirror filters, in
	// filter order.
	Mirrors []*Backend
}

// GRPCRule is a GRPCRoute rule with its backends resolved.
type GRPCRule struct {
	Rule     *gatewayv1.GRPCRouteRule
	Backends []*Backend
	Mirrors  []*Backend
}

// RouteState is one HTTPRoute or GRPCRoute with a parentRef to a Gateway
// of ours.
type RouteState struct {
	Kind            string
	Namespace, Name string
	Generation      int64
	// HTTP or GRPC is the route, by Kind.
	HTTP *gatewayv1.HTTPRoute
	GRPC *gatewayv1.GRPCRoute
	// Parents are the status entries of our parentRefs, in parentRef
	// order: RouteStatus.Parents for our controller.
	Parents []gatewayv1.RouteParentStatus
	// HTTPRules or GRPCRules are the route's rules resolved, in spec
	// order; nil for a rule that is dropped (PartiallyInvalid).
	HTTPRules []*HTTPRule
	GRPCRules []*GRPCRule
	// scopes are, per scoped host the route's entries are in, the indices
	// in Parents of the parentRefs that put them there (Input.Translate
	// sets them; see ParentsWith).
	scopes map[core.Scope][]int
}

// Key is the route's namespace and name.
func (r *RouteState) Key() snapshot.Key { return snapshot.Key{Namespace: r.Namespace, Name: r.Name} }

// PolicyState is one BackendTLSPolicy.
type PolicyState struct {
	Policy *gatewayv1.BackendTLSPolicy
	// Status holds the entries of the Gateways whose routes use a Service
	// the policy targets: PolicyStatus.Ancestors for our controller.
	Status gatewayv1.PolicyStatus
	// TLS is what the policy asks for, or nil when it is not accepted.
	TLS *BackendTLS
}

// condition builds a condition of an object of the given generation;
// LastTransitionTime stays zero for the status writer to set.
func condition[T, R ~string](t T, ok bool, reason R, message string, generation int64) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: string(t), Status: status, Reason: string(reason), Message: message, ObservedGeneration: generation}
}
