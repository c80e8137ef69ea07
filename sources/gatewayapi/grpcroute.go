package gatewayapi

import (
	"fmt"
	"regexp"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// grpcRoute decides a GRPCRoute with a parentRef to a Gateway of ours.
func (c *computation) grpcRoute(r *gatewayv1.GRPCRoute) *RouteState {
	st := &RouteState{Kind: kindGRPCRoute, Namespace: r.Namespace, Name: r.Name, Generation: r.Generation, GRPC: r}
	spec := &routeSpec{kind: kindGRPCRoute, meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
	for i := range r.Spec.Rules {
		rule := &r.Spec.Rules[i]
		if problem := grpcRuleProblem(rule); problem != "" {
			spec.dropped = append(spec.dropped, fmt.Sprintf("Dropped Rule %d: %s", i, problem))
			st.GRPCRules = append(st.GRPCRules, nil)
			continue
		}
		spec.kept++
		st.GRPCRules = append(st.GRPCRules, c.grpcRule(r.Namespace, rule))
	}
	spec.addEntries = func(h *Host) { h.GRPC = append(h.GRPC, grpcEntries(st, r)...) }
	c.attach(st, spec, resolvedRefs(st.backends(), r.Generation))
	return st
}

func (c *computation) grpcRule(namespace string, rule *gatewayv1.GRPCRouteRule) *GRPCRule {
	out := &GRPCRule{Rule: rule}
	for _, ref := range rule.BackendRefs {
		out.Backends = append(out.Backends, c.backend(kindGRPCRoute, namespace, ref.BackendObjectReference, ref.Weight))
	}
	for _, f := range rule.Filters {
		if f.Type == gatewayv1.GRPCRouteFilterRequestMirror && f.RequestMirror != nil {
			out.Mirrors = append(out.Mirrors, c.backend(kindGRPCRoute, namespace, f.RequestMirror.BackendRef, nil))
		}
	}
	return out
}

// grpcEntries are the matches of a route's kept rules; a rule without
// matches has the empty match, which matches every request.
func grpcEntries(st *RouteState, r *gatewayv1.GRPCRoute) []GRPCEntry {
	var out []GRPCEntry
	for i, rule := range st.GRPCRules {
		if rule == nil {
			continue
		}
		matches := rule.Rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.GRPCRouteMatch{{}}
		}
		for j, m := range matches {
			out = append(out, GRPCEntry{
				Ref:   Ref{Kind: kindGRPCRoute, Namespace: r.Namespace, Name: r.Name, Rule: i, Match: j, created: r.CreationTimestamp.Time, uid: string(r.UID)},
				Match: m,
				Rule:  rule,
			})
		}
	}
	return out
}

// grpcRuleProblem says why a rule cannot be served ("" when it can): an
// ExtensionRef filter, a filter on a backendRef, or a regular expression
// that does not compile.
func grpcRuleProblem(rule *gatewayv1.GRPCRouteRule) string {
	for i, b := range rule.BackendRefs {
		if len(b.Filters) > 0 {
			return fmt.Sprintf("backendRefs[%d]: filters on a backendRef are not supported", i)
		}
	}
	for _, f := range rule.Filters {
		if f.Type == gatewayv1.GRPCRouteFilterExtensionRef {
			return "ExtensionRef filters are not supported"
		}
	}
	for j, m := range rule.Matches {
		if problem := grpcMatchProblem(m); problem != "" {
			return fmt.Sprintf("matches[%d]: %s", j, problem)
		}
	}
	return ""
}

func grpcMatchProblem(m gatewayv1.GRPCRouteMatch) string {
	if mm := m.Method; mm != nil && mm.Type != nil && *mm.Type == gatewayv1.GRPCMethodMatchRegularExpression {
		for _, v := range []*string{mm.Service, mm.Method} {
			if v == nil {
				continue
			}
			if _, err := regexp.Compile(*v); err != nil {
				return fmt.Sprintf("method: the regular expression does not compile: %v", err)
			}
		}
	}
	for _, h := range m.Headers {
		if h.Type != nil && *h.Type == gatewayv1.GRPCHeaderMatchRegularExpression {
			if _, err := regexp.Compile(h.Value); err != nil {
				return fmt.Sprintf("header %s: the regular expression does not compile: %v", h.Name, err)
			}
		}
	}
	return ""
}
