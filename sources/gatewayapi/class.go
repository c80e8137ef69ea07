package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// classes decides the GatewayClasses of our controller: each is accepted
// unless it has a parametersRef, since this controller takes no
// parameters (InvalidParameters). supportedFeatures lists the options'
// features sorted by name.
func classes(byName map[string]*gatewayv1.GatewayClass, opts Options) map[string]*ClassState {
	features := make([]gatewayv1.SupportedFeature, 0, len(opts.SupportedFeatures))
	for _, f := range opts.SupportedFeatures {
		features = append(features, gatewayv1.SupportedFeature{Name: f})
	}
	slices.SortFunc(features, func(a, b gatewayv1.SupportedFeature) int { return cmp.Compare(a.Name, b.Name) })
	features = slices.CompactFunc(features, func(a, b gatewayv1.SupportedFeature) bool { return a.Name == b.Name })
	out := map[string]*ClassState{}
	for name, gc := range byName {
		if gc.Spec.ControllerName != opts.controller() {
			continue
		}
		st := &ClassState{Class: gc, Accepted: gc.Spec.ParametersRef == nil}
		accepted := condition(gatewayv1.GatewayClassConditionStatusAccepted, true, gatewayv1.GatewayClassReasonAccepted, "", gc.Generation)
		if !st.Accepted {
			p := gc.Spec.ParametersRef
			accepted = condition(gatewayv1.GatewayClassConditionStatusAccepted, false, gatewayv1.GatewayClassReasonInvalidParameters,
				fmt.Sprintf("parametersRef %s %s: this controller takes no parameters", groupKind(string(p.Group), string(p.Kind)), p.Name), gc.Generation)
		}
		st.Status = gatewayv1.GatewayClassStatus{Conditions: []metav1.Condition{accepted}, SupportedFeatures: slices.Clone(features)}
		out[name] = st
	}
	return out
}

// groupKind is "Kind.group", or "Kind" for the core group.
func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}
