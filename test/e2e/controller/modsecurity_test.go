package controller

import (
	"net/http"
	"testing"
)

// TestModSecurity: an Ingress with enable-modsecurity,
// enable-owasp-core-rules and a modsecurity-snippet turning the engine On
// is served through the Core Rule Set: a clean request reaches the member,
// a SQL injection is answered 403 by ramjetd and never reaches it.
func TestModSecurity(t *testing.T) {
	e := newEnv(t)
	e.service("web", userEcho(e))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("waf", e.host("waf"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/enable-modsecurity":      "true",
		"nginx.ingress.kubernetes.io/enable-owasp-core-rules": "true",
		"nginx.ingress.kubernetes.io/modsecurity-snippet":     "SecRuleEngine On\n",
	}))
	headers := map[string]string{"Accept": "text/html", "User-Agent": "ramjet-e2e/1.0"}
	base := "http://" + e.host("waf")
	eventually(t, wait, "a clean request reaches the member", func() error {
		return expectAnswer(client, base+"/products?id=42", headers, http.StatusOK, "web")
	})
	if err := expectAnswer(client, base+"/products?id=1%27%20OR%20%271%27%3D%271", headers, http.StatusForbidden, ""); err != nil {
		t.Errorf("a SQL injection: %v", err)
	}
}
