package gatewayapi

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// routeSpec is what attachment reads of a route of either kind.
type routeSpec struct {
	kind      string
	meta      *metav1.ObjectMeta
	parents   []gatewayv1.ParentReference
	hostnames []gatewayv1.Hostname
	// dropped says why rules are left out ("Dropped Rule 1: ...").
	dropped []string
	// kept is the number of rules that are not dropped.
	kept int
	// addEntries puts the matches of the kept rules into a host's table.
	addEntries func(*Host)
}

// parentGateway is the Gateway a parentRef names, when it is a Gateway
// (the default group and kind), in the route's namespace unless the ref
// names another.
func parentGateway(routeNamespace string, ref gatewayv1.ParentReference) (snapshot.Key, bool) {
	if ref.Group != nil && *ref.Group != groupGateway || ref.Kind != nil && *ref.Kind != kindGateway {
		return snapshot.Key{}, false
	}
	key := snapshot.Key{Namespace: routeNamespace, Name: string(ref.Name)}
	if ref.Namespace != nil && *ref.Namespace != "" {
		key.Namespace = string(*ref.Namespace)
	}
	return key, true
}

// ours reports whether a route has a parentRef to a Gateway of ours.
func (c *computation) ours(namespace string, refs []gatewayv1.ParentReference) bool {
	for _, ref := range refs {
		if key, ok := parentGateway(namespace, ref); ok && c.gateways[key] != nil {
			return true
		}
	}
	return false
}

// attach decides each parentRef of a route to a Gateway of ours: it
// records the attachments in the Gateways' listeners and appends the
// parentRef's status entry to st.Parents, in parentRef order. resolved is
// the route's ResolvedRefs condition, the same for every parent.
func (c *computation) attach(st *RouteState, spec *routeSpec, resolved metav1.Condition) {
	for _, ref := range spec.parents {
		key, ok := parentGateway(spec.meta.Namespace, ref)
		ge := c.gateways[key]
		if !ok || ge == nil {
			continue
		}
		ge.state.Routes = append(ge.state.Routes, st)
		conds := []metav1.Condition{c.attachParent(spec, ref, ge), resolved}
		if len(spec.dropped) > 0 && spec.kept > 0 {
			conds = append(conds, condition(gatewayv1.RouteConditionPartiallyInvalid, true, gatewayv1.RouteReasonUnsupportedValue,
				strings.Join(spec.dropped, "; "), spec.meta.Generation))
		}
		st.Parents = append(st.Parents, gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: c.opts.controller(), Conditions: conds})
	}
}

// attachParent decides one parentRef: the listeners it names (by
// sectionName and port; NoMatchingParent when none), those of them whose
// allowedRoutes take the route (NotAllowedByListeners when none), and
// those whose hostname intersects the route's (NoMatchingListenerHostname
// when none). A route whose every rule is dropped is not accepted
// (UnsupportedValue). An accepted route is added to each such listener's
// tables, once per served hostname.
func (c *computation) attachParent(spec *routeSpec, ref gatewayv1.ParentReference, ge *gatewayEntry) metav1.Condition {
	gen := spec.meta.Generation
	gw := ge.state.Gateway
	var named, allowed []int
	for i := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[i]
		if ref.SectionName != nil && *ref.SectionName != l.Name || ref.Port != nil && *ref.Port != l.Port {
			continue
		}
		named = append(named, i)
		if ge.checks[i].allows(spec.kind) && c.namespaceAllowed(gw, l, spec.meta.Namespace) {
			allowed = append(allowed, i)
		}
	}
	switch {
	case len(named) == 0:
		return condition(gatewayv1.RouteConditionAccepted, false, gatewayv1.RouteReasonNoMatchingParent, noMatchingParent(gw, ref), gen)
	case len(allowed) == 0:
		return condition(gatewayv1.RouteConditionAccepted, false, gatewayv1.RouteReasonNotAllowedByListeners,
			fmt.Sprintf("no listener of Gateway %s/%s takes %ss from namespace %s", gw.Namespace, gw.Name, spec.kind, spec.meta.Namespace), gen)
	}
	hosts := make([][]string, len(allowed))
	matched := false
	for j, i := range allowed {
		hosts[j] = servedHostnames(hostname(gw.Spec.Listeners[i].Hostname), hostnameStrings(spec.hostnames))
		matched = matched || len(hosts[j]) > 0
	}
	switch {
	case !matched:
		return condition(gatewayv1.RouteConditionAccepted, false, gatewayv1.RouteReasonNoMatchingListenerHostname,
			fmt.Sprintf("no hostname of the route intersects the hostname of a listener of Gateway %s/%s", gw.Namespace, gw.Name), gen)
	case spec.kept == 0:
		return condition(gatewayv1.RouteConditionAccepted, false, gatewayv1.RouteReasonUnsupportedValue, "no rule can be served: "+strings.Join(spec.dropped, "; "), gen)
	}
	for j, i := range allowed {
		if len(hosts[j]) == 0 {
			continue
		}
		route := spec.kind + " " + spec.meta.Namespace + "/" + spec.meta.Name
		ge.attached[i][route] = true
		for _, h := range hosts[j] {
			if host, first := ge.host(i, h, route); first {
				spec.addEntries(host)
			}
		}
	}
	return condition(gatewayv1.RouteConditionAccepted, true, gatewayv1.RouteReasonAccepted, "", gen)
}

func noMatchingParent(gw *gatewayv1.Gateway, ref gatewayv1.ParentReference) string {
	var want []string
	if ref.SectionName != nil {
		want = append(want, fmt.Sprintf("named %s", *ref.SectionName))
	}
	if ref.Port != nil {
		want = append(want, fmt.Sprintf("on port %d", *ref.Port))
	}
	return fmt.Sprintf("Gateway %s/%s has no listener %s", gw.Namespace, gw.Name, strings.Join(want, " and "))
}

func hostnameStrings(hs []gatewayv1.Hostname) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
	}
	return out
}

// namespaceAllowed applies a listener's allowedRoutes.namespaces: Same
// (the default) is the Gateway's namespace, All any, Selector the
// namespaces whose labels the selector matches (every namespace carries
// kubernetes.io/metadata.name, as the API server sets it), None none.
func (c *computation) namespaceAllowed(gw *gatewayv1.Gateway, l *gatewayv1.Listener, namespace string) bool {
	from := gatewayv1.NamespacesFromSame
	var selector *metav1.LabelSelector
	if l.AllowedRoutes != nil && l.AllowedRoutes.Namespaces != nil {
		ns := l.AllowedRoutes.Namespaces
		if ns.From != nil {
			from = *ns.From
		}
		selector = ns.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSame:
		return namespace == gw.Namespace
	case gatewayv1.NamespacesFromSelector:
		if selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(selector)
		return err == nil && sel.Matches(namespaceLabels(c.snap.Namespaces[namespace], namespace))
	}
	return false
}

func namespaceLabels(ns *corev1.Namespace, name string) labels.Set {
	set := labels.Set{corev1.LabelMetadataName: name}
	if ns != nil {
		for k, v := range ns.Labels {
			set[k] = v
		}
	}
	return set
}

// resolvedRefs is a route's ResolvedRefs condition: the reason of its
// first invalid backend (in rule and ref order), naming how many more
// there are.
func resolvedRefs(backends []*Backend, generation int64) metav1.Condition {
	var first *Backend
	invalid := 0
	for _, b := range backends {
		if !b.Valid() {
			if first == nil {
				first = b
			}
			invalid++
		}
	}
	if first == nil {
		return condition(gatewayv1.RouteConditionResolvedRefs, true, gatewayv1.RouteReasonResolvedRefs, "", generation)
	}
	msg := first.Message
	if invalid > 1 {
		msg += fmt.Sprintf(" (and %d more invalid backendRefs)", invalid-1)
	}
	return condition(gatewayv1.RouteConditionResolvedRefs, false, first.Reason, msg, generation)
}

// backends are every resolved ref of the route's kept rules, mirrors
// included, in rule order.
func (r *RouteState) backends() []*Backend {
	var out []*Backend
	for _, rule := range r.HTTPRules {
		if rule != nil {
			out = append(append(out, rule.Backends...), rule.Mirrors...)
		}
	}
	for _, rule := range r.GRPCRules {
		if rule != nil {
			out = append(append(out, rule.Backends...), rule.Mirrors...)
		}
	}
	return out
}

// acceptedGateways are the Gateways a route is accepted by.
func acceptedGateways(r *RouteState) []snapshot.Key {
	var out []snapshot.Key
	for _, p := range r.Parents {
		if p.Conditions[0].Status != metav1.ConditionTrue {
			continue
		}
		key, _ := parentGateway(r.Namespace, p.ParentRef)
		out = append(out, key)
	}
	return out
}
