package gatewayapi

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestParentsWith: a finding with a scope marks the accepted parentRefs
// whose listeners put entries into that scoped host (by Gateway, and
// sectionName and port where the ref names them); one without a scope, or
// with a scope the route has no entries in, marks every accepted
// parentRef; other objects' findings mark nothing.
func TestParentsWith(t *testing.T) {
	section := func(s gatewayv1.SectionName) *gatewayv1.SectionName { return &s }
	port := func(p gatewayv1.PortNumber) *gatewayv1.PortNumber { return &p }
	entry := func(ref gatewayv1.ParentReference, accepted bool) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: DefaultControllerName,
			Conditions: []metav1.Condition{condition(gatewayv1.RouteConditionAccepted, accepted, gatewayv1.RouteReasonAccepted, "", 3)}}
	}
	rs := &RouteState{Kind: kindHTTPRoute, Namespace: "shop", Name: "store", Generation: 3, Parents: []gatewayv1.RouteParentStatus{
		entry(gatewayv1.ParentReference{Name: "a", SectionName: section("http")}, true),
		entry(gatewayv1.ParentReference{Name: "a", SectionName: section("admin")}, true),
		entry(gatewayv1.ParentReference{Name: "b"}, false),
		entry(gatewayv1.ParentReference{Name: "c", Port: port(80)}, true),
		entry(gatewayv1.ParentReference{Name: "c", Port: port(8080)}, true),
	}}
	shop := core.Scope{Listener: "http", Host: "shop.example.com"}
	rs.scopes = scopeParents(rs, map[core.Scope][]listenerOf{shop: {
		{gateway: snapshot.Key{Namespace: "shop", Name: "a"}, name: "http", port: 80},
		{gateway: snapshot.Key{Namespace: "shop", Name: "b"}, name: "http", port: 80},
		{gateway: snapshot.Key{Namespace: "shop", Name: "c"}, name: "web", port: 80},
	}})
	store := core.Origin{Kind: kindHTTPRoute, Namespace: "shop", Name: "store"}
	conflict := core.Finding{Object: store, Reason: core.PathConflict, Scope: shop, Message: "shop is served by Ingress shop/web"}
	leftOut := core.Finding{Object: store, Reason: core.InvalidConfiguration, Message: "left out"}
	tests := []struct {
		name     string
		findings []core.Finding
		// want is, per parent, the Conflicted condition's reason and
		// message ("" for none).
		want [][2]string
	}{{
		name:     "a scoped finding marks the parentRefs of its listeners",
		findings: []core.Finding{conflict},
		want:     [][2]string{{"PathConflict", conflict.Message}, {}, {}, {"PathConflict", conflict.Message}, {}},
	}, {
		name:     "a finding about the whole route marks every accepted parentRef",
		findings: []core.Finding{leftOut},
		want:     [][2]string{{"InvalidConfiguration", "left out"}, {"InvalidConfiguration", "left out"}, {}, {"InvalidConfiguration", "left out"}, {"InvalidConfiguration", "left out"}},
	}, {
		name:     "a scope the route has no entries in marks every accepted parentRef",
		findings: []core.Finding{{Object: store, Reason: core.PathConflict, Scope: core.Scope{Listener: "https"}, Message: "any"}},
		want:     [][2]string{{"PathConflict", "any"}, {"PathConflict", "any"}, {}, {"PathConflict", "any"}, {"PathConflict", "any"}},
	}, {
		name:     "findings on one parentRef join, the first giving the reason",
		findings: []core.Finding{conflict, leftOut},
		want: [][2]string{{"PathConflict", conflict.Message + "; left out"}, {"InvalidConfiguration", "left out"}, {},
			{"PathConflict", conflict.Message + "; left out"}, {"InvalidConfiguration", "left out"}},
	}, {
		name: "findings about other objects mark nothing",
		findings: []core.Finding{
			{Object: core.Origin{Kind: kindGRPCRoute, Namespace: "shop", Name: "store"}, Reason: core.PathConflict, Message: "x"},
			{Object: core.Origin{Kind: "Ingress", Namespace: "shop", Name: "store"}, Reason: core.PathConflict, Message: "x"},
		},
		want: [][2]string{{}, {}, {}, {}, {}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(rs.Parents)
			got := rs.ParentsWith(tc.findings)
			for i, p := range got {
				var have [2]string
				if c := meta.FindStatusCondition(p.Conditions, string(RouteConditionConflicted)); c != nil {
					if c.Status != metav1.ConditionTrue || c.ObservedGeneration != 3 {
						t.Errorf("parent %d: condition %+v, want True at generation 3", i, c)
					}
					have = [2]string{c.Reason, c.Message}
				}
				if have != tc.want[i] {
					t.Errorf("parent %d: reason and message %q, want %q", i, have, tc.want[i])
				}
			}
			for i := range rs.Parents {
				if len(rs.Parents[i].Conditions) != len(before[i].Conditions) {
					t.Errorf("parent %d of the route changed: %+v", i, rs.Parents[i])
				}
			}
		})
	}
}
