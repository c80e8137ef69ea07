package gatewayapi

import (
	"slices"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// ConditionPrefix is the domain of the condition types Ramjet adds to the
// ones the Gateway API defines.
const ConditionPrefix = "ramjet.dev/"

// RouteConditionConflicted is True on a route's status.parents entry while
// some of what the route asks of that parent is not served because of
// objects outside it: an older Ingress (or Gateway) holds one of its
// hostnames on a listener they share (reason PathConflict), or the route
// was left out because it made the configuration invalid (reason
// InvalidConfiguration). The message says what and why. Accepted stays as
// attachment decided it; the condition is absent when nothing conflicts,
// as the spec's Conflicted listener condition and PartiallyInvalid are
// only set when True.
const RouteConditionConflicted gatewayv1.RouteConditionType = ConditionPrefix + "Conflicted"

// maxConditionMessage is the API server's limit on a condition's message.
const maxConditionMessage = 32768

// listenerOf is a Gateway listener that put a route's entries into a
// scoped host.
type listenerOf struct {
	gateway snapshot.Key
	name    gatewayv1.SectionName
	port    gatewayv1.PortNumber
}

// via records that a Gateway listener put entries of ref's route into a
// scoped host.
func (b *builder) via(ref Ref, scope core.Scope, gw *gatewayv1.Gateway, ls *ListenerState) {
	id := routeID(ref.Kind, ref.Namespace, ref.Name)
	if b.vias[id] == nil {
		b.vias[id] = map[core.Scope][]listenerOf{}
	}
	l := listenerOf{gateway: gatewayKey(gw), name: ls.Listener.Name, port: ls.Listener.Port}
	if !slices.Contains(b.vias[id][scope], l) {
		b.vias[id][scope] = append(b.vias[id][scope], l)
	}
}

// scopeParents maps each scoped host of a route to the indices in
// rs.Parents of the accepted parentRefs whose listeners put entries into
// it: those naming the listener's Gateway, and its name and port where
// they name any.
func scopeParents(rs *RouteState, vias map[core.Scope][]listenerOf) map[core.Scope][]int {
	out := make(map[core.Scope][]int, len(vias))
	for scope, ls := range vias {
		for i, p := range rs.Parents {
			if p.Conditions[0].Status != metav1.ConditionTrue {
				continue
			}
			key, _ := parentGateway(rs.Namespace, p.ParentRef)
			ref := p.ParentRef
			if slices.ContainsFunc(ls, func(l listenerOf) bool {
				return l.gateway == key && (ref.SectionName == nil || *ref.SectionName == l.name) && (ref.Port == nil || *ref.Port == l.port)
			}) {
				out[scope] = append(out[scope], i)
			}
		}
	}
	return out
}

// ParentsWith returns Parents with the findings about this route (those
// whose Object is it, from the merge of every input's contributions) as a
// RouteConditionConflicted condition on the entries they concern: a
// finding with a scope concerns the parentRefs whose listeners put entries
// into that scoped host, one without (the route left out) every accepted
// parentRef. The condition's reason is the first finding's, its message
// every finding's. Parents itself does not change.
func (r *RouteState) ParentsWith(findings []core.Finding) []gatewayv1.RouteParentStatus {
	if len(findings) == 0 {
		return r.Parents
	}
	perParent := make([][]core.Finding, len(r.Parents))
	for _, f := range findings {
		if f.Object.Kind != r.Kind || f.Object.Namespace != r.Namespace || f.Object.Name != r.Name {
			continue
		}
		for _, i := range r.concerned(f) {
			perParent[i] = append(perParent[i], f)
		}
	}
	out := slices.Clone(r.Parents)
	for i, fs := range perParent {
		if len(fs) > 0 {
			out[i].Conditions = append(slices.Clone(out[i].Conditions), conflicted(fs, r.Generation))
		}
	}
	return out
}

// concerned are the indices in Parents of the entries a finding concerns.
func (r *RouteState) concerned(f core.Finding) []int {
	if f.Scope.Listener != "" {
		if is, ok := r.scopes[f.Scope]; ok {
			return is
		}
	}
	var out []int
	for i, p := range r.Parents {
		if p.Conditions[0].Status == metav1.ConditionTrue {
			out = append(out, i)
		}
	}
	return out
}

func conflicted(fs []core.Finding, generation int64) metav1.Condition {
	msgs := make([]string, len(fs))
	for i, f := range fs {
		msgs[i] = f.Message
	}
	return condition(RouteConditionConflicted, true, fs[0].Reason, cutMessage(strings.Join(msgs, "; "), maxConditionMessage), generation)
}

// cutMessage cuts msg to at most limit bytes, at a rune boundary.
func cutMessage(msg string, limit int) string {
	if len(msg) <= limit {
		return msg
	}
	cut := limit - len("...")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "..."
}
