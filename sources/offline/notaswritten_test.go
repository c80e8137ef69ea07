package offline

import (
	"testing"

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
