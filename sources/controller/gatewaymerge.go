package controller

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
)

// The merges below turn the status an object has and the status Compute
// decided into the status to write, as the Gateway API's notes for
// implementors ask: conditions merge by type, a condition keeps its
// lastTransitionTime while its status stays, conditions of other parties
// and the route and policy entries of other controllers are kept where
// they are. They never change their arguments.

// mergeConditions returns computed merged into current. A condition of
// ours (a type without a domain prefix, which the Gateway API defines, or
// one of gatewayapi.ConditionPrefix) takes its computed value in its
// place, keeping its lastTransitionTime when its status is unchanged, or
// goes when it is no longer computed; a condition with a newer
// observedGeneration than the computed one is kept (it was written from a
// newer object than ours). Types of other domains (example.com/Type)
// belong to others and are kept as they are. Computed conditions the
// object lacks are appended, transitioned now.
func mergeConditions(current, computed []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(current)+len(computed))
	done := make(map[string]bool, len(computed))
	for _, c := range current {
		if strings.Contains(c.Type, "/") && !strings.HasPrefix(c.Type, gatewayapi.ConditionPrefix) {
			out = append(out, c)
			continue
		}
		next := meta.FindStatusCondition(computed, c.Type)
		if next == nil || done[c.Type] {
			continue
		}
		done[c.Type] = true
		out = append(out, transition(c, *next, now))
	}
	for _, next := range computed {
		if !done[next.Type] {
			done[next.Type] = true
			next.LastTransitionTime = now
			out = append(out, next)
		}
	}
	return out
}

// transition is next in the place of cur: cur when it was observed on a
// newer generation, otherwise next with cur's lastTransitionTime if the
// status is the same, or now.
func transition(cur, next metav1.Condition, now metav1.Time) metav1.Condition {
	if cur.ObservedGeneration > next.ObservedGeneration {
		return cur
	}
	next.LastTransitionTime = now
	if cur.Status == next.Status {
		next.LastTransitionTime = cur.LastTransitionTime
	}
	return next
}

// refKey is a parentRef or ancestorRef with its defaults filled in: the
// Gateway API keys route and policy status entries by the whole reference.
type refKey struct {
	group, kind, namespace, name, section string
	port                                  gatewayv1.PortNumber
}

// keyOf is ref's key; namespace is the namespace of the object that holds
// the reference, the default of ref's.
func keyOf(ref gatewayv1.ParentReference, namespace string) refKey {
	k := refKey{group: gatewayv1.GroupName, kind: "Gateway", namespace: namespace, name: string(ref.Name)}
	if ref.Group != nil {
		k.group = string(*ref.Group)
	}
	if ref.Kind != nil {
		k.kind = string(*ref.Kind)
	}
	if ref.Namespace != nil {
		k.namespace = string(*ref.Namespace)
	}
	if ref.SectionName != nil {
		k.section = string(*ref.SectionName)
	}
	if ref.Port != nil {
		k.port = *ref.Port
	}
	return k
}

// mergeOwned merges the computed entries of our controller into a list
// shared with other controllers: an entry that is not ours stays in its
// place; one of ours takes the computed entry of the same key in its
// place, merged by merge, or goes when there is none (its reference is
// gone); computed entries the list lacks are appended in their order.
func mergeOwned[E any](current, computed []E, ours func(E) bool, key func(E) refKey, merge func(cur *E, next E) E) []E {
	index := make(map[refKey]int, len(computed))
	for i, e := range computed {
		index[key(e)] = i
	}
	used := make([]bool, len(computed))
	out := make([]E, 0, len(current)+len(computed))
	for _, e := range current {
		if !ours(e) {
			out = append(out, e)
			continue
		}
		i, ok := index[key(e)]
		if !ok || used[i] {
			continue
		}
		used[i] = true
		out = append(out, merge(&e, computed[i]))
	}
	for i, e := range computed {
		if !used[i] {
			out = append(out, merge(nil, e))
		}
	}
	return out
}

// mergeParents merges our controller's computed status.parents entries of
// a route in namespace into the route's current ones.
func mergeParents(current, computed []gatewayv1.RouteParentStatus, controller gatewayv1.GatewayController, namespace string, now metav1.Time) []gatewayv1.RouteParentStatus {
	return mergeOwned(current, computed,
		func(p gatewayv1.RouteParentStatus) bool { return p.ControllerName == controller },
		func(p gatewayv1.RouteParentStatus) refKey { return keyOf(p.ParentRef, namespace) },
		func(cur *gatewayv1.RouteParentStatus, next gatewayv1.RouteParentStatus) gatewayv1.RouteParentStatus {
			var conds []metav1.Condition
			if cur != nil {
				conds = cur.Conditions
			}
			next.Conditions = mergeConditions(conds, next.Conditions, now)
			return next
		})
}

// mergeAncestors merges our controller's computed status.ancestors
// entries of a policy in namespace into the policy's current ones.
func mergeAncestors(current, computed []gatewayv1.PolicyAncestorStatus, controller gatewayv1.GatewayController, namespace string, now metav1.Time) []gatewayv1.PolicyAncestorStatus {
	return mergeOwned(current, computed,
		func(a gatewayv1.PolicyAncestorStatus) bool { return a.ControllerName == controller },
		func(a gatewayv1.PolicyAncestorStatus) refKey { return keyOf(a.AncestorRef, namespace) },
		func(cur *gatewayv1.PolicyAncestorStatus, next gatewayv1.PolicyAncestorStatus) gatewayv1.PolicyAncestorStatus {
			var conds []metav1.Condition
			if cur != nil {
				conds = cur.Conditions
			}
			next.Conditions = mergeConditions(conds, next.Conditions, now)
			return next
		})
}

// mergeClassStatus is a GatewayClass's status to write: the computed one,
// its conditions merged.
func mergeClassStatus(current, computed gatewayv1.GatewayClassStatus, now metav1.Time) gatewayv1.GatewayClassStatus {
	out := computed
	out.Conditions = mergeConditions(current.Conditions, computed.Conditions, now)
	return out
}

// mergeGatewayStatus is a Gateway's status to write: the computed one,
// its conditions and each listener's (by name) merged. With hold, the
// Gateway's and the listeners' Programmed conditions say what is served
// rather than what was computed: the one on the object, or False/Pending
// where the object has none.
func mergeGatewayStatus(current, computed gatewayv1.GatewayStatus, now metav1.Time, hold bool) gatewayv1.GatewayStatus {
	out := computed
	out.Conditions = mergeConditions(current.Conditions, held(current.Conditions, computed.Conditions, hold,
		string(gatewayv1.GatewayConditionProgrammed), string(gatewayv1.GatewayReasonPending)), now)
	out.Listeners = make([]gatewayv1.ListenerStatus, len(computed.Listeners))
	for i, l := range computed.Listeners {
		var conds []metav1.Condition
		for _, c := range current.Listeners {
			if c.Name == l.Name {
				conds = c.Conditions
				break
			}
		}
		l.Conditions = mergeConditions(conds, held(conds, l.Conditions, hold,
			string(gatewayv1.ListenerConditionProgrammed), string(gatewayv1.ListenerReasonPending)), now)
		out.Listeners[i] = l
	}
	return out
}

// held is computed with, when hold is set, its condition of type typ
// replaced by current's, or by False with reason pending when current has
// none.
func held(current, computed []metav1.Condition, hold bool, typ, pending string) []metav1.Condition {
	if !hold {
		return computed
	}
	out := make([]metav1.Condition, len(computed))
	for i, c := range computed {
		if c.Type == typ {
			if cur := meta.FindStatusCondition(current, typ); cur != nil {
				c = *cur
			} else {
				c = metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: pending,
					Message: "waiting for the data plane to load the configuration", ObservedGeneration: c.ObservedGeneration}
			}
		}
		out[i] = c
	}
	return out
}
