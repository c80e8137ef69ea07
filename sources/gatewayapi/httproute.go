package gatewayapi

import (
	"fmt"
	"regexp"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// httpRoute decides an HTTPRoute with a parentRef to a Gateway of ours.
func (c *computation) httpRoute(r *gatewayv1.HTTPRoute) *RouteState {
	st := &RouteState{Kind: kindHTTPRoute, Namespace: r.Namespace, Name: r.Name, Generation: r.Generation, HTTP: r}
	spec := &routeSpec{kind: kindHTTPRoute, meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
	for i := range r.Spec.Rules {
		rule := &r.Spec.Rules[i]
		if problem := httpRuleProblem(rule); problem != "" {
			spec.dropped = append(spec.dropped, fmt.Sprintf("Dropped Rule %d: %s", i, problem))
			st.HTTPRules = append(st.HTTPRules, nil)
			continue
		}
		spec.kept++
		st.HTTPRules = append(st.HTTPRules, c.httpRule(r.Namespace, rule))
	}
	spec.addEntries = func(h *Host) { h.HTTP = append(h.HTTP, httpEntries(st, r)...) }
	c.attach(st, spec, resolvedRefs(st.backends(), r.Generation))
	return st
}

// httpRule resolves a rule's backendRefs and mirror backends.
func (c *computation) httpRule(namespace string, rule *gatewayv1.HTTPRouteRule) *HTTPRule {
	out := &HTTPRule{Rule: rule}
	for _, ref := range rule.BackendRefs {
		out.Backends = append(out.Backends, c.backend(kindHTTPRoute, namespace, ref.BackendObjectReference, ref.Weight))
	}
	for _, f := range rule.Filters {
		if f.Type == gatewayv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil {
			out.Mirrors = append(out.Mirrors, c.backend(kindHTTPRoute, namespace, f.RequestMirror.BackendRef, nil))
		}
	}
	return out
}

// httpEntries are the matches of a route's kept rules; a rule without
// matches matches PathPrefix "/", and a match without a path too.
func httpEntries(st *RouteState, r *gatewayv1.HTTPRoute) []HTTPEntry {
	var out []HTTPEntry
	for i, rule := range st.HTTPRules {
		if rule == nil {
			continue
		}
		matches := rule.Rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.HTTPRouteMatch{{}}
		}
		for j, m := range matches {
			out = append(out, HTTPEntry{
				Ref:   Ref{Kind: kindHTTPRoute, Namespace: r.Namespace, Name: r.Name, Rule: i, Match: j, created: r.CreationTimestamp.Time, uid: string(r.UID)},
				Match: withDefaultPath(m),
				Rule:  rule,
			})
		}
	}
	return out
}

func withDefaultPath(m gatewayv1.HTTPRouteMatch) gatewayv1.HTTPRouteMatch {
	path := gatewayv1.HTTPPathMatch{}
	if m.Path != nil {
		path = *m.Path
	}
	if path.Type == nil {
		t := gatewayv1.PathMatchPathPrefix
		path.Type = &t
	}
	if path.Value == nil {
		v := "/"
		path.Value = &v
	}
	m.Path = &path
	return m
}

// httpRuleProblem says why a rule cannot be served ("" when it can): an
// ExtensionRef filter (no extension is supported), a filter on a
// backendRef (the data plane has no policies per backend), a ReplacePrefixMatch
// in a rule with a match that is not PathPrefix, or a regular expression
// that does not compile.
func httpRuleProblem(rule *gatewayv1.HTTPRouteRule) string {
	for i, b := range rule.BackendRefs {
		if len(b.Filters) > 0 {
			return fmt.Sprintf("backendRefs[%d]: filters on a backendRef are not supported", i)
		}
	}
	for _, f := range rule.Filters {
		if f.Type == gatewayv1.HTTPRouteFilterExtensionRef {
			return "ExtensionRef filters are not supported"
		}
		if replacesPrefix(f) && !allPrefix(rule.Matches) {
			return fmt.Sprintf("a %s filter with ReplacePrefixMatch needs PathPrefix matches", f.Type)
		}
	}
	for j, m := range rule.Matches {
		if problem := matchProblem(m); problem != "" {
			return fmt.Sprintf("matches[%d]: %s", j, problem)
		}
	}
	return ""
}

func replacesPrefix(f gatewayv1.HTTPRouteFilter) bool {
	var p *gatewayv1.HTTPPathModifier
	switch {
	case f.URLRewrite != nil:
		p = f.URLRewrite.Path
	case f.RequestRedirect != nil:
		p = f.RequestRedirect.Path
	}
	return p != nil && p.Type == gatewayv1.PrefixMatchHTTPPathModifier
}

func allPrefix(matches []gatewayv1.HTTPRouteMatch) bool {
	for _, m := range matches {
		if *withDefaultPath(m).Path.Type != gatewayv1.PathMatchPathPrefix {
			return false
		}
	}
	return true
}

func matchProblem(m gatewayv1.HTTPRouteMatch) string {
	if m.Path != nil && m.Path.Type != nil && *m.Path.Type == gatewayv1.PathMatchRegularExpression && m.Path.Value != nil {
		if _, err := regexp.Compile(*m.Path.Value); err != nil {
			return fmt.Sprintf("path: the regular expression does not compile: %v", err)
		}
	}
	for _, h := range m.Headers {
		if h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression {
			if _, err := regexp.Compile(h.Value); err != nil {
				return fmt.Sprintf("header %s: the regular expression does not compile: %v", h.Name, err)
			}
		}
	}
	for _, q := range m.QueryParams {
		if q.Type != nil && *q.Type == gatewayv1.QueryParamMatchRegularExpression {
			if _, err := regexp.Compile(q.Value); err != nil {
				return fmt.Sprintf("query param %s: the regular expression does not compile: %v", q.Name, err)
			}
		}
	}
	return ""
}
