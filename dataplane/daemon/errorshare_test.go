package daemon

import (
	"net/http"
	"strings"
	"testing"
)

// errorShareConfig has a route whose weighted action sends .PoolWeight
// shares to a pool and .StatusWeight shares to a fixed 500, and a route
// whose only choice is the 500 (a rule with no valid backend).
const errorShareConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pools: [{pool: a, weight: {{.PoolWeight}}}, {status: 500, weight: {{.StatusWeight}}}]}
          - match: {path: {prefix: /none}}
            action: {pools: [{status: 500, weight: 1}]}
    pools:
      a: {members: ["{{.A}}"]}
`

// TestWeightedErrorShare proves that a weighted choice with a status keeps
// its share of the requests, answered with that status without reaching
// any member, and that the other shares reach the pool.
func TestWeightedErrorShare(t *testing.T) {
	const requests = 2000
	tests := []struct {
		name                     string
		poolWeight, statusWeight int
		// min and max bound the 500s of the requests to / (binomial, about
		// six standard deviations wide).
		min, max int64
	}{
		{"one to one", 1, 1, 850, 1150},
		{"three to one", 3, 1, 380, 620},
		{"status weight 0 sends none", 1, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := startBackend(t, echo("a"))
			td := startDaemon(t, errorShareConfig, map[string]any{"A": a.addr, "PoolWeight": tc.poolWeight, "StatusWeight": tc.statusWeight})
			c := client()
			var failed int64
			for range requests {
				status, body, err := send(t, c, td, http.MethodGet, "/", nil)
				switch {
				case err != nil:
					t.Fatal(err)
				case status == http.StatusInternalServerError && strings.HasPrefix(body, "Internal Server Error"):
					failed++
				case status != http.StatusOK:
					t.Fatalf("status %d %q, want 200 or 500", status, body)
				}
			}
			if failed < tc.min || failed > tc.max {
				t.Errorf("%d of %d requests answered 500, want %d..%d", failed, requests, tc.min, tc.max)
			}
			if got := a.requests.Load(); got != requests-failed {
				t.Errorf("the pool received %d requests, want the %d not answered 500", got, requests-failed)
			}
			for range 20 {
				if status, _, _ := send(t, c, td, http.MethodGet, "/none", nil); status != http.StatusInternalServerError {
					t.Fatalf("a route with only a status choice answered %d, want 500", status)
				}
			}
		})
	}
}
