package config_test

import (
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestValidateWeightedStatusChoice(t *testing.T) {
	const P = "tenants.t.applications.app.routes[0].action.pools"
	tests := []struct {
		name  string
		pools []config.WeightedPool
		want  []wantErr
	}{
		{"a pool and a 500", []config.WeightedPool{{Pool: "p", Weight: 1}, {Status: 500, Weight: 1}}, nil},
		{"only a status", []config.WeightedPool{{Status: 503, Weight: 1}}, nil},
		{"status 400", []config.WeightedPool{{Status: 400, Weight: 1}}, nil},
		{"status 599", []config.WeightedPool{{Status: 599, Weight: 1}}, nil},
		{"status below 400", []config.WeightedPool{{Pool: "p", Weight: 1}, {Status: 302, Weight: 1}},
			[]wantErr{{P + "[1].status", "must be 400..599"}}},
		{"status above 599", []config.WeightedPool{{Status: 600, Weight: 1}},
			[]wantErr{{P + "[0].status", "must be 400..599"}}},
		{"pool and status", []config.WeightedPool{{Pool: "p", Status: 500, Weight: 1}},
			[]wantErr{{P + "[0]", "pool and status exclude each other"}}},
		{"neither pool nor status", []config.WeightedPool{{Weight: 1}},
			[]wantErr{{P + "[0].pool", `no pool "" in this tenant`}}},
		{"status with weight 0 only", []config.WeightedPool{{Status: 500}},
			[]wantErr{{P, "at least one weight must be above 0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			*action(c) = config.Action{Pools: tc.pools}
			checkFieldErrors(t, c.Validate(), tc.want)
		})
	}
}
