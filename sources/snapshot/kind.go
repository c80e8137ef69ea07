package snapshot

// Kind names a kind of object an input watches and a snapshot holds,
// besides the Services, EndpointSlices, Secrets and ConfigMaps that every
// input reads. The watch (sources/kube) builds one informer per kind the
// enabled inputs name, and none for the others.
type Kind string

// The kinds of the inputs.
const (
	// The Ingress input's.
	IngressClasses Kind = "IngressClasses"
	Ingresses      Kind = "Ingresses"
	// The Gateway API input's.
	GatewayClasses     Kind = "GatewayClasses"
	Gateways           Kind = "Gateways"
	HTTPRoutes         Kind = "HTTPRoutes"
	GRPCRoutes         Kind = "GRPCRoutes"
	ReferenceGrants    Kind = "ReferenceGrants"
	BackendTLSPolicies Kind = "BackendTLSPolicies"
	Namespaces         Kind = "Namespaces"
)
