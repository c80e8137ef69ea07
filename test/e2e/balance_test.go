package e2e

import (
	"math"
	"net/http"
	"testing"
)

// canaryObjects are a main Ingress on host {{.host}} sending / to the
// Service web and a canary Ingress on the same host and path sending it to
// web-v2, with the canary annotations given in {{.canary}}.
const canaryObjects = `
{{ingress "main" .host "web"}}
{{ingress "canary" .host "web-v2" "canary" "true" .canary}}
{{service "web" .web}}
{{service "web-v2" .v2}}`

// TestCanaryByHeader: with canary-by-header X-Canary, "always" sends the
// request to the canary and "never", any other value or no header keep it
// on the main backend (the canary's weight is 0).
func TestCanaryByHeader(t *testing.T) {
	web, v2 := startBackend(t, "web", nil), startBackend(t, "web-v2", nil)
	rj := start(t, canaryObjects, map[string]any{
		"host": "shop.example.com", "web": web, "v2": v2,
		"canary": map[string]string{"canary-by-header": "X-Canary"},
	})
	cases := []struct {
		name    string
		header  []string
		backend string
	}{
		{"always", []string{"X-Canary", "always"}, "web-v2"},
		{"never", []string{"X-Canary", "never"}, "web"},
		{"another value", []string{"X-Canary", "yes"}, "web"},
		{"no header", nil, "web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 5 {
				got := rj.get(t, "shop.example.com", "/cart?id=7", tc.header...)
				if got.status != http.StatusOK || got.backend() != tc.backend {
					t.Fatalf("status %d from %q, want 200 from %s", got.status, got.backend(), tc.backend)
				}
				if got.echo.Path != "/cart" || got.echo.Query != "id=7" {
					t.Errorf("the backend got %q ? %q, want /cart ? id=7", got.echo.Path, got.echo.Query)
				}
			}
		})
	}
}

// TestCanaryByWeight: canary-weight 30 sends about 30% of the requests to
// the canary.
func TestCanaryByWeight(t *testing.T) {
	web, v2 := startBackend(t, "web", nil), startBackend(t, "web-v2", nil)
	rj := start(t, canaryObjects, map[string]any{
		"host": "shop.example.com", "web": web, "v2": v2,
		"canary": map[string]string{"canary-weight": "30"},
	})
	const n, p = 2000, 0.30
	counts := map[string]int{}
	for range n {
		got := rj.get(t, "shop.example.com", "/")
		if got.status != http.StatusOK {
			t.Fatalf("status %d, want 200 (body %q)", got.status, got.body)
		}
		counts[got.backend()]++
	}
	// The canary's count is binomial(n, p) if each request is drawn at
	// random: its standard deviation is sqrt(n p (1-p)) = 20.5 requests
	// (1.02%). Six of them either side, 30% ± 6.1%, fails a correct
	// balancer about twice in a billion runs.
	tolerance := 6 * math.Sqrt(n*p*(1-p))
	if canary := counts["web-v2"]; math.Abs(float64(canary)-n*p) > tolerance || counts["web"]+canary != n {
		t.Errorf("of %d requests, %d reached the canary and %d the main backend; want %.0f ± %.0f on the canary and the rest on the main",
			n, canary, counts["web"], n*p, tolerance)
	}
	t.Logf("canary share: %.1f%%", 100*float64(counts["web-v2"])/n)
}

// TestCookieAffinity: with affinity cookie, a Service with two members
// (two EndpointSlices, each with one loopback endpoint on its own port)
// answers a client without the cookie with INGRESSCOOKIE set; with that
// cookie every request reaches the same member, while requests without it
// spread over both.
func TestCookieAffinity(t *testing.T) {
	a, b := startBackend(t, "a", nil), startBackend(t, "b", nil)
	rj := start(t, `
{{ingress "sticky" "sticky.example.com" "web" "affinity" "cookie"}}
{{service "web" .a .b}}`, map[string]any{"a": a, "b": b})

	first := rj.get(t, "sticky.example.com", "/")
	if first.status != http.StatusOK || first.echo == nil {
		t.Fatalf("first request: status %d from %q, want 200 from a backend", first.status, first.backend())
	}
	cookie := affinityCookie(t, first.header)
	if cookie == nil {
		t.Fatalf("first answer sets no INGRESSCOOKIE (Set-Cookie %q)", first.header.Values("Set-Cookie"))
	}
	if cookie.Value == "" || cookie.Path != "/" || !cookie.HttpOnly {
		t.Errorf("cookie %q: want a value, Path=/ and HttpOnly", cookie.String())
	}

	t.Run("with the cookie", func(t *testing.T) {
		for i := range 50 {
			got := rj.get(t, "sticky.example.com", "/", "Cookie", cookie.Name+"="+cookie.Value)
			if got.status != http.StatusOK || got.backend() != first.backend() {
				t.Fatalf("request %d: status %d from %q, want 200 from %s, the first answer's backend", i, got.status, got.backend(), first.backend())
			}
			if again := affinityCookie(t, got.header); again != nil {
				t.Fatalf("request %d: a client with the cookie got a new one: %q", i, again.String())
			}
		}
	})
	t.Run("without the cookie", func(t *testing.T) {
		// Each request gets a new random cookie: 50 requests all on one
		// member of two would happen about once in 10^15 runs.
		seen := map[string]int{}
		for range 50 {
			got := rj.get(t, "sticky.example.com", "/")
			if got.status != http.StatusOK || affinityCookie(t, got.header) == nil {
				t.Fatalf("status %d, Set-Cookie %q: want 200 and a new cookie", got.status, got.header.Values("Set-Cookie"))
			}
			seen[got.backend()]++
		}
		if seen["a"] == 0 || seen["b"] == 0 {
			t.Errorf("50 requests without the cookie reached %v, want both a and b", seen)
		}
	})
}

// affinityCookie returns the INGRESSCOOKIE a response sets, or nil.
func affinityCookie(t *testing.T, h http.Header) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "INGRESSCOOKIE" {
			return c
		}
	}
	return nil
}
