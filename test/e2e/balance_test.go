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

// TestCanaryByHeader: with canary-by-header X-Canary, canary-by-cookie beta
// and canary-weight 100, precedence is ingress-nginx's: the header's
// "always" and "never" decide first, then the cookie's, then the weight,
// which sends everything else to the canary. So "never" must beat both a
// cookie's "always" and the weight.
func TestCanaryByHeader(t *testing.T) {
	web, v2 := startBackend(t, "web", nil), startBackend(t, "web-v2", nil)
	rj := start(t, canaryObjects, map[string]any{
		"host": "shop.example.com", "web": web, "v2": v2,
		"canary": map[string]string{"canary-by-header": "X-Canary", "canary-by-cookie": "beta", "canary-weight": "100"},
	})
	cases := []struct {
		name    string
		header  []string
		backend string
	}{
		{"header always", []string{"X-Canary", "always"}, "web-v2"},
		{"header never beats the weight", []string{"X-Canary", "never"}, "web"},
		{"header never beats the cookie", []string{"X-Canary", "never", "Cookie", "beta=always"}, "web"},
		{"cookie never beats the weight", []string{"Cookie", "a=1; beta=never"}, "web"},
		{"header always beats cookie never", []string{"X-Canary", "always", "Cookie", "beta=never"}, "web-v2"},
		{"another header value falls through to the weight", []string{"X-Canary", "yes"}, "web-v2"},
		{"no header or cookie: the weight", nil, "web-v2"},
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

// TestCanaryKeepsMainAccessControl: a canary's header route copies its main
// route's policies, so a main that allows only 10.0.0.0/8 refuses the
// loopback client with 403 whichever way the request would go.
func TestCanaryKeepsMainAccessControl(t *testing.T) {
	web, v2 := startBackend(t, "web", nil), startBackend(t, "web-v2", nil)
	rj := start(t, `
{{ingress "main" .host "web" "allowlist-source-range" "10.0.0.0/8"}}
{{ingress "canary" .host "web-v2" "canary" "true" "canary-by-header" "X-Canary" "canary-weight" "50"}}
{{service "web" .web}}
{{service "web-v2" .v2}}`, map[string]any{"host": "shop.example.com", "web": web, "v2": v2})
	for _, header := range [][]string{{"X-Canary", "always"}, {"X-Canary", "never"}, nil} {
		if got := rj.get(t, "shop.example.com", "/", header...); got.status != http.StatusForbidden {
			t.Errorf("header %q: status %d from %q, want 403", header, got.status, got.backend())
		}
	}
	if web.requests.Load()+v2.requests.Load() != 0 {
		t.Error("a backend was reached")
	}
}
