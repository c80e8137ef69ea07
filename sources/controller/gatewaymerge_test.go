package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const (
	us    gatewayv1.GatewayController = "ramjet.dev/gateway"
	other gatewayv1.GatewayController = "example.com/other"
)

var (
	earlier = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now     = metav1.NewTime(time.Date(2026, 6, 7, 8, 9, 10, 0, time.UTC))
)

func cond(typ string, status metav1.ConditionStatus, reason string, gen int64, at metav1.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, ObservedGeneration: gen, LastTransitionTime: at}
}

func parent(controller gatewayv1.GatewayController, ref gatewayv1.ParentReference, conds ...metav1.Condition) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: controller, Conditions: conds}
}

func gatewayRef(name string) gatewayv1.ParentReference {
	return gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
}

// defaulted is ref as the API server stores it: group and kind filled in.
func defaulted(ref gatewayv1.ParentReference) gatewayv1.ParentReference {
	group, kind := gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind("Gateway")
	ref.Group, ref.Kind = &group, &kind
	return ref
}

func onPort(ref gatewayv1.ParentReference, port gatewayv1.PortNumber) gatewayv1.ParentReference {
	ref.Port = &port
	return ref
}

// TestMergeParents: entries of other controllers stay as they are and
// where they are, ours take the computed value in their place or go when
// their parentRef is gone, new ones are appended; a condition keeps its
// lastTransitionTime while its status stays.
func TestMergeParents(t *testing.T) {
	const T, F = metav1.ConditionTrue, metav1.ConditionFalse
	foreign := parent(other, gatewayRef("web"), cond("Accepted", T, "Accepted", 1, earlier))
	tests := []struct {
		name                    string
		current, computed, want []gatewayv1.RouteParentStatus
	}{{
		name:     "a new route gets our entries, transitioned now",
		computed: []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 1, metav1.Time{}))},
		want:     []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 1, now))},
	}, {
		name: "another controller's entry for the same parentRef is kept in its place",
		current: []gatewayv1.RouteParentStatus{
			parent(us, defaulted(gatewayRef("web")), cond("Accepted", T, "Accepted", 1, earlier)),
			foreign,
		},
		computed: []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"),
			cond("Accepted", T, "Accepted", 2, metav1.Time{}), cond("ResolvedRefs", F, "BackendNotFound", 2, metav1.Time{}))},
		want: []gatewayv1.RouteParentStatus{
			parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 2, earlier), cond("ResolvedRefs", F, "BackendNotFound", 2, now)),
			foreign,
		},
	}, {
		name: "a changed status transitions now, a dropped condition of ours goes, a domain-prefixed one stays",
		current: []gatewayv1.RouteParentStatus{foreign, parent(us, gatewayRef("web"),
			cond("Accepted", T, "Accepted", 1, earlier), cond("example.com/Audited", T, "Audited", 1, earlier),
			cond("PartiallyInvalid", T, "UnsupportedValue", 1, earlier))},
		computed: []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"), cond("Accepted", F, "NotAllowedByListeners", 2, metav1.Time{}))},
		want: []gatewayv1.RouteParentStatus{foreign, parent(us, gatewayRef("web"),
			cond("Accepted", F, "NotAllowedByListeners", 2, now), cond("example.com/Audited", T, "Audited", 1, earlier))},
	}, {
		name: "a ramjet.dev/ condition is ours: it keeps its time while it lasts and goes when no longer computed",
		current: []gatewayv1.RouteParentStatus{
			parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 1, earlier), cond("ramjet.dev/Conflicted", T, "PathConflict", 1, earlier)),
			parent(us, gatewayRef("api"), cond("Accepted", T, "Accepted", 1, earlier), cond("ramjet.dev/Conflicted", T, "PathConflict", 1, earlier)),
		},
		computed: []gatewayv1.RouteParentStatus{
			parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 1, metav1.Time{}), cond("ramjet.dev/Conflicted", T, "PathConflict", 1, metav1.Time{})),
			parent(us, gatewayRef("api"), cond("Accepted", T, "Accepted", 1, metav1.Time{})),
		},
		want: []gatewayv1.RouteParentStatus{
			parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 1, earlier), cond("ramjet.dev/Conflicted", T, "PathConflict", 1, earlier)),
			parent(us, gatewayRef("api"), cond("Accepted", T, "Accepted", 1, earlier)),
		},
	}, {
		name: "our entry of a parentRef that is gone is dropped; the ports tell entries apart",
		current: []gatewayv1.RouteParentStatus{
			parent(us, onPort(gatewayRef("web"), 80), cond("Accepted", T, "Accepted", 1, earlier)),
			foreign,
			parent(us, onPort(gatewayRef("web"), 443), cond("Accepted", T, "Accepted", 1, earlier)),
			parent(us, gatewayRef("gone"), cond("Accepted", T, "Accepted", 1, earlier)),
		},
		computed: []gatewayv1.RouteParentStatus{
			parent(us, onPort(gatewayRef("web"), 443), cond("Accepted", T, "Accepted", 1, metav1.Time{})),
			parent(us, gatewayRef("new"), cond("Accepted", T, "Accepted", 1, metav1.Time{})),
		},
		want: []gatewayv1.RouteParentStatus{
			foreign,
			parent(us, onPort(gatewayRef("web"), 443), cond("Accepted", T, "Accepted", 1, earlier)),
			parent(us, gatewayRef("new"), cond("Accepted", T, "Accepted", 1, now)),
		},
	}, {
		name:     "a condition observed on a newer generation than ours is kept",
		current:  []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"), cond("Accepted", F, "NoMatchingParent", 3, earlier))},
		computed: []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 2, metav1.Time{}))},
		want:     []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"), cond("Accepted", F, "NoMatchingParent", 3, earlier))},
	}, {
		name:     "a route no longer ours loses our entries only",
		current:  []gatewayv1.RouteParentStatus{parent(us, gatewayRef("web"), cond("Accepted", T, "Accepted", 1, earlier)), foreign},
		computed: nil,
		want:     []gatewayv1.RouteParentStatus{foreign},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeParents(tc.current, tc.computed, us, "shop", now)
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("merged parents differ (-want +got):\n%s", diff.Diff(tc.want, got))
			}
		})
	}
}

// TestMergeAncestors: a policy's ancestors merge by controller and
// ancestorRef, the namespace of the policy being the default.
func TestMergeAncestors(t *testing.T) {
	ns := gatewayv1.Namespace("shop")
	explicit := gatewayRef("web")
	explicit.Namespace = &ns
	foreign := gatewayv1.PolicyAncestorStatus{AncestorRef: explicit, ControllerName: other,
		Conditions: []metav1.Condition{cond("Accepted", metav1.ConditionTrue, "Accepted", 1, earlier)}}
	current := []gatewayv1.PolicyAncestorStatus{foreign, {AncestorRef: gatewayRef("web"), ControllerName: us,
		Conditions: []metav1.Condition{cond("Accepted", metav1.ConditionTrue, "Accepted", 1, earlier)}}}
	computed := []gatewayv1.PolicyAncestorStatus{{AncestorRef: explicit, ControllerName: us,
		Conditions: []metav1.Condition{cond("Accepted", metav1.ConditionTrue, "Accepted", 2, metav1.Time{})}}}
	want := []gatewayv1.PolicyAncestorStatus{foreign, {AncestorRef: explicit, ControllerName: us,
		Conditions: []metav1.Condition{cond("Accepted", metav1.ConditionTrue, "Accepted", 2, earlier)}}}
	if got := mergeAncestors(current, computed, us, "shop", now); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("merged ancestors differ (-want +got):\n%s", diff.Diff(want, got))
	}
}

// TestMergeGatewayStatus: listeners merge by name; with hold, Programmed
// stays as the object has it, or is False/Pending where it has none.
func TestMergeGatewayStatus(t *testing.T) {
	const T, F = metav1.ConditionTrue, metav1.ConditionFalse
	current := gatewayv1.GatewayStatus{
		Conditions: []metav1.Condition{cond("Accepted", T, "Accepted", 1, earlier), cond("Programmed", F, "AddressNotAssigned", 1, earlier)},
		Listeners: []gatewayv1.ListenerStatus{{Name: "http", AttachedRoutes: 1,
			Conditions: []metav1.Condition{cond("Programmed", T, "Programmed", 1, earlier)}}},
	}
	computed := gatewayv1.GatewayStatus{
		Addresses:  []gatewayv1.GatewayStatusAddress{{Value: "198.18.0.10"}},
		Conditions: []metav1.Condition{cond("Accepted", T, "Accepted", 2, metav1.Time{}), cond("Programmed", T, "Programmed", 2, metav1.Time{})},
		Listeners: []gatewayv1.ListenerStatus{
			{Name: "https", Conditions: []metav1.Condition{cond("Programmed", T, "Programmed", 2, metav1.Time{})}},
			{Name: "http", AttachedRoutes: 2, Conditions: []metav1.Condition{cond("Programmed", T, "Programmed", 2, metav1.Time{})}},
		},
	}
	tests := []struct {
		name string
		hold bool
		want gatewayv1.GatewayStatus
	}{{
		name: "published",
		want: gatewayv1.GatewayStatus{
			Addresses:  computed.Addresses,
			Conditions: []metav1.Condition{cond("Accepted", T, "Accepted", 2, earlier), cond("Programmed", T, "Programmed", 2, now)},
			Listeners: []gatewayv1.ListenerStatus{
				{Name: "https", Conditions: []metav1.Condition{cond("Programmed", T, "Programmed", 2, now)}},
				{Name: "http", AttachedRoutes: 2, Conditions: []metav1.Condition{cond("Programmed", T, "Programmed", 2, earlier)}},
			},
		},
	}, {
		name: "not published",
		hold: true,
		want: gatewayv1.GatewayStatus{
			Addresses:  computed.Addresses,
			Conditions: []metav1.Condition{cond("Accepted", T, "Accepted", 2, earlier), cond("Programmed", F, "AddressNotAssigned", 1, earlier)},
			Listeners: []gatewayv1.ListenerStatus{
				{Name: "https", Conditions: []metav1.Condition{{Type: "Programmed", Status: F, Reason: "Pending",
					Message: "waiting for the data plane to load the configuration", ObservedGeneration: 2, LastTransitionTime: now}}},
				{Name: "http", AttachedRoutes: 2, Conditions: []metav1.Condition{cond("Programmed", T, "Programmed", 1, earlier)}},
			},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeGatewayStatus(current, computed, now, tc.hold)
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("merged status differs (-want +got):\n%s", diff.Diff(tc.want, got))
			}
		})
	}
}
