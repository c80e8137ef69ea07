package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// Features are the Gateway API features Ramjet claims in each
// GatewayClass's status.supportedFeatures: the core features of the
// profiles GATEWAY-HTTP and GATEWAY-GRPC, and every extended feature whose
// conformance tests pass in own-address mode (docs/conformance/report.yaml;
// TestFeaturesMatchReport keeps the two the same).
var Features = featureNames(
	// Core.
	features.SupportGateway,
	features.SupportHTTPRoute,
	features.SupportGRPCRoute,
	features.SupportReferenceGrant,
	// Gateway, extended.
	features.SupportGatewayPort8080,
	features.SupportGatewayHTTPListenerIsolation,
	features.SupportGatewayAddressEmpty,
	features.SupportGatewayHTTPSListenerDetectMisdirectedRequests,
	features.SupportGatewayStaticAddresses,
	// HTTPRoute, extended.
	features.SupportHTTPRouteQueryParamMatching,
	features.SupportHTTPRouteMethodMatching,
	features.SupportHTTPRouteResponseHeaderModification,
	features.SupportHTTPRoutePortRedirect,
	features.SupportHTTPRouteSchemeRedirect,
	features.SupportHTTPRoutePathRedirect,
	features.SupportHTTPRoute303RedirectStatusCode,
	features.SupportHTTPRoute307RedirectStatusCode,
	features.SupportHTTPRoute308RedirectStatusCode,
	features.SupportHTTPRouteHostRewrite,
	features.SupportHTTPRoutePathRewrite,
	features.SupportHTTPRouteRequestMirror,
	features.SupportHTTPRouteRequestMultipleMirrors,
	features.SupportHTTPRouteRequestPercentageMirror,
	features.SupportHTTPRouteRequestTimeout,
	features.SupportHTTPRouteBackendTimeout,
	features.SupportHTTPRouteParentRefPort,
	features.SupportHTTPRouteBackendProtocolH2C,
	features.SupportHTTPRouteBackendProtocolWebSocket,
	features.SupportHTTPRouteNamedRouteRule,
	features.SupportHTTPRouteCORS,
	// BackendTLSPolicy.
	features.SupportBackendTLSPolicy,
)

func featureNames(names ...features.FeatureName) []gatewayv1.FeatureName {
	out := make([]gatewayv1.FeatureName, len(names))
	for i, n := range names {
		out[i] = gatewayv1.FeatureName(n)
	}
	return out
}
