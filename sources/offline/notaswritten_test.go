package offline

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/core"
)

// TestNotAsWritten: `translate --check` fails for an object not served,
// or with a finding about how it is written; findings about the cluster's
// Services and EndpointSlices (no members, refused addresses) do not fail
// it.
func TestNotAsWritten(t *testing.T) {
	tests := []struct {
		name    string
		state   core.State
		reasons []core.Reason
		want    bool
	}{
		{"served without findings", core.Served, nil, false},
		{"not served", core.Rejected, nil, true},
		{"service not found", core.Served, []core.Reason{core.ServiceNotFound}, false},
		{"no endpoints", core.Served, []core.Reason{core.NoEndpoints}, false},
		{"refused addresses", core.Served, []core.Reason{core.AddressRefused}, false},
		{"invalid annotation", core.Served, []core.Reason{core.NoEndpoints, core.InvalidAnnotation}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := ObjectReport{Kind: "Ingress", Namespace: "a", Name: "web", State: tc.state}
			for _, r := range tc.reasons {
				o.Findings = append(o.Findings, FindingReport{Reason: r, Message: "m"})
			}
			r := &Report{Objects: []ObjectReport{o}}
			if got := r.NotAsWritten(); got != tc.want {
				t.Errorf("NotAsWritten = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestConditionNotAsWritten: the Gateway API conditions that fail
// `translate --check` are Accepted, ResolvedRefs and Programmed False,
// PartiallyInvalid True and any Conflicted True; a Programmed False for
// want of an address is the cluster's state and does not.
func TestConditionNotAsWritten(t *testing.T) {
	tests := []struct {
		name, typ string
		status    metav1.ConditionStatus
		reason    string
		want      bool
	}{
		{"accepted", "Accepted", metav1.ConditionTrue, "Accepted", false},
		{"not accepted", "Accepted", metav1.ConditionFalse, "NoMatchingParent", true},
		{"refs not resolved", "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound", true},
		{"not programmed", "Programmed", metav1.ConditionFalse, "Invalid", true},
		{"no address", "Programmed", metav1.ConditionFalse, "AddressNotAssigned", false},
		{"listener pending", "Programmed", metav1.ConditionFalse, "Pending", false},
		{"programmed unknown", "Programmed", metav1.ConditionUnknown, "Pending", false},
		{"listener conflicted", "Conflicted", metav1.ConditionTrue, "HostnameConflict", true},
		{"listener not conflicted", "Conflicted", metav1.ConditionFalse, "NoConflicts", false},
		{"route conflicted", "ramjet.dev/Conflicted", metav1.ConditionTrue, "PathConflict", true},
		{"rules dropped", "PartiallyInvalid", metav1.ConditionTrue, "UnsupportedValue", true},
		{"another type false", "ramjet.dev/InfrastructureIgnored", metav1.ConditionFalse, "NotCopied", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := metav1.Condition{Type: tc.typ, Status: tc.status, Reason: tc.reason}
			if got := notAsWritten(c); got != tc.want {
				t.Errorf("notAsWritten(%s=%s %s) = %t, want %t", tc.typ, tc.status, tc.reason, got, tc.want)
			}
		})
	}
	r := &Report{GatewayConditions: []ConditionReport{{Kind: "HTTPRoute", Type: "Accepted", Status: "False"}}}
	if !r.NotAsWritten() {
		t.Error("a report with a Gateway API condition: NotAsWritten = false, want true")
	}
}
