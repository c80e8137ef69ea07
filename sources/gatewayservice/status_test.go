package gatewayservice

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestStatus: each problem of a Gateway's Service shows in the Gateway's
// status, and a Programmed condition that is False for another reason
// stays.
func TestStatus(t *testing.T) {
	gw := gateway("shop", "web", 80, 443)
	gw.Generation = 4
	key := snapshot.Key{Namespace: "shop", Name: "web"}
	computed := func(programmed metav1.ConditionStatus, reason gatewayv1.GatewayConditionReason) gatewayv1.GatewayStatus {
		st := gatewayv1.GatewayStatus{Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 4},
			{Type: "Programmed", Status: programmed, Reason: string(reason), ObservedGeneration: 4},
		}}
		for _, l := range gw.Spec.Listeners {
			st.Listeners = append(st.Listeners, gatewayv1.ListenerStatus{Name: l.Name, Conditions: []metav1.Condition{
				{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", ObservedGeneration: 4},
			}})
		}
		return st
	}
	served := computed(metav1.ConditionTrue, gatewayv1.GatewayReasonProgrammed)
	unaddressed := computed(metav1.ConditionFalse, gatewayv1.GatewayReasonAddressNotAssigned)
	invalid := computed(metav1.ConditionFalse, gatewayv1.GatewayReasonInvalid)
	taken := Problem{Gateway: key, Reason: NameTaken, Message: "Service x exists and is not managed by Ramjet, so the Gateway has no address"}
	some := Problem{Gateway: key, Reason: PortsExhausted, Ports: []int32{443}, Message: "no free pod port in 20000-20000 for Gateway port(s) 443"}
	all := Problem{Gateway: key, Reason: PortsExhausted, Ports: []int32{80, 443}, Message: "no free pod port in 20000-20000 for Gateway port(s) 80, 443"}
	label := Problem{Gateway: key, Reason: InfrastructureIgnored, Message: `spec.infrastructure.labels: "a" is reserved`}
	annotation := Problem{Gateway: key, Reason: InfrastructureIgnored, Message: `spec.infrastructure.annotations: "b" is invalid`}
	tests := []struct {
		name     string
		computed gatewayv1.GatewayStatus
		problems []Problem
		// programmed is the Gateway's Programmed condition as
		// "Status Reason: message", listeners each listener's.
		programmed string
		listeners  []string
		ignored    string
	}{{
		name: "no problem", computed: served,
		programmed: "True Programmed: ", listeners: []string{"True Programmed: ", "True Programmed: "},
	}, {
		name: "a foreign Service holds the name", computed: unaddressed, problems: []Problem{taken},
		programmed: "False AddressNotAssigned: " + taken.Message,
		listeners:  []string{"False Pending: " + taken.Message, "False Pending: " + taken.Message},
	}, {
		name: "some ports have no pod port", computed: served, problems: []Problem{some},
		programmed: "True Programmed: ", listeners: []string{"True Programmed: ", "False Pending: " + some.Message},
	}, {
		name: "no port has a pod port", computed: unaddressed, problems: []Problem{all},
		programmed: "False NoResources: " + all.Message,
		listeners:  []string{"False Pending: " + all.Message, "False Pending: " + all.Message},
	}, {
		name: "ignored infrastructure keys keep the Gateway programmed", computed: served, problems: []Problem{label, annotation},
		programmed: "True Programmed: ", listeners: []string{"True Programmed: ", "True Programmed: "},
		ignored: "True NotCopied: " + label.Message + "; " + annotation.Message,
	}, {
		name: "an invalid Gateway keeps its reason", computed: invalid, problems: []Problem{taken},
		programmed: "False Invalid: ", listeners: []string{"False Pending: " + taken.Message, "False Pending: " + taken.Message},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := *tc.computed.DeepCopy()
			got := Status(gw, tc.computed, tc.problems)
			if s := describeCondition(got.Conditions, "Programmed"); s != tc.programmed {
				t.Errorf("Programmed is %q, want %q", s, tc.programmed)
			}
			for i, l := range got.Listeners {
				if s := describeCondition(l.Conditions, "Programmed"); s != tc.listeners[i] {
					t.Errorf("listener %s: Programmed is %q, want %q", l.Name, s, tc.listeners[i])
				}
			}
			if s := describeCondition(got.Conditions, GatewayConditionInfrastructureIgnored); s != tc.ignored {
				t.Errorf("%s is %q, want %q", GatewayConditionInfrastructureIgnored, s, tc.ignored)
			}
			if !equality.Semantic.DeepEqual(before, tc.computed) {
				t.Errorf("the computed status changed")
			}
		})
	}
}

func describeCondition(conds []metav1.Condition, typ string) string {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}
