package controller

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// The OpenID Connect client oauth2-proxy is to the provider, and the user
// the provider signs in.
const (
	oidcClientID     = "ramjet-e2e"
	oidcClientSecret = "e2e-client-secret"
	oidcSubject      = "u-4711"
	oidcEmail        = "jane@example.test"
)

// Ports of the provider and of oauth2-proxy (its usual one).
const (
	oidcPort   = 9000
	oauth2Port = 4180
)

// TestOAuth2ProxySignIn: the sign-in flow of ingress-nginx's documented
// oauth2-proxy setup, with real oauth2-proxy and an OpenID Connect provider
// (mockoidc, which signs its user in without a page) running in the test's
// network. The Ingress app guards host H with auth-url (oauth2-proxy's
// /oauth2/auth), auth-signin (http://H/oauth2/start, to which ramjetd adds
// rd) and auth-response-headers; the Ingress oauth2 sends H's /oauth2 to
// oauth2-proxy. A browser-like client (a cookie jar; H through ramjetd, the
// provider directly) asks for http://H/private: ramjetd redirects it to
// the sign-in with rd naming the page; following the redirects through
// oauth2-proxy, the provider and the callback brings it back to the page
// with oauth2-proxy's cookie, and the member answers, having seen the
// user and e-mail oauth2-proxy answered, never the e-mail the client
// forged. A client without the cookie is redirected again.
func TestOAuth2ProxySignIn(t *testing.T) {
	e := newEnv(t)
	host := e.host("app")
	issuer := startOIDC(e)
	proxy := startOAuth2Proxy(e, issuer, host)
	e.service("app", identityEcho(e))
	e.servicePort("oauth2-proxy", oauth2Port, proxy.Addr().String())
	r := e.startRamjet()
	e.create(e.ingress("app", host, "app", map[string]string{
		"nginx.ingress.kubernetes.io/auth-url":              "http://" + proxy.String() + "/oauth2/auth",
		"nginx.ingress.kubernetes.io/auth-signin":           "http://" + host + "/oauth2/start",
		"nginx.ingress.kubernetes.io/auth-response-headers": "X-Auth-Request-User,X-Auth-Request-Email",
	}))
	sign := e.ingress("oauth2", host, "oauth2-proxy", nil)
	sign.Spec.Rules[0].HTTP.Paths[0].Path = "/oauth2"
	e.create(sign)
	page := "http://" + host + "/private"
	// rd is ingress-nginx's $scheme://$http_host$escaped_request_uri.
	start := "http://" + host + "/oauth2/start?rd=http://" + host + "%2Fprivate"

	// Both Ingresses served: the sign-in path reaches oauth2-proxy, which
	// sends the client to the provider, and the page sends a client
	// without oauth2-proxy's cookie to the sign-in.
	anonymous := browser(t, r, host)
	eventually(t, wait, "the sign-in path redirects to the provider", func() error {
		return expectRedirect(anonymous, start, nil, issuer+"/authorize?")
	})
	eventually(t, wait, "the page redirects to the sign-in", func() error {
		return expectRedirect(anonymous, page, nil, start)
	})

	client := browser(t, r, host)
	hops, err := follow(client, page, 8)
	if err != nil {
		t.Fatalf("signing in: %v (hops: %s)", err, strings.Join(hops, " → "))
	}
	t.Logf("signed in through %s", strings.Join(hops, " → "))
	want := []string{page, start, issuer + "/authorize?", "http://" + host + "/oauth2/callback?code=", page}
	if len(hops) != len(want) || !allPrefixed(hops, want) {
		t.Errorf("sign-in hops %s, want the page, %s, the provider, the callback and the page again", strings.Join(hops, " → "), start)
	}
	forged := map[string]string{"X-Auth-Request-Email": "mallory@example.test", "X-Auth-Request-User": "mallory"}
	for _, headers := range []map[string]string{nil, forged} {
		resp := send(t, client, page, headers)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Backend") != "app" {
			t.Fatalf("signed in, GET %s: %d from backend %q, want 200 from app", page, resp.StatusCode, resp.Header.Get("X-Backend"))
		}
		user, email := resp.Header.Get("X-Seen-User"), resp.Header.Get("X-Seen-Email")
		if user != oidcSubject || email != oidcEmail {
			t.Errorf("with headers %v the member saw user %q and e-mail %q, want oauth2-proxy's %q and %q", headers, user, email, oidcSubject, oidcEmail)
		}
	}

	if err := expectRedirect(browser(t, r, host), page, forged, start); err != nil {
		t.Errorf("without the cookie, forged headers: %v", err)
	}
}

// startOIDC runs the test's OpenID Connect provider (test/tools/oidc) on a
// new address of the network and returns its issuer URL.
func startOIDC(e *env) string {
	e.t.Helper()
	addr := e.addr(oidcPort)
	issuer := "http://" + addr.String() + "/oidc"
	p := e.network.Run(e.t, "oidc", "-listen", addr.String(), "-client-id", oidcClientID, "-client-secret", oidcClientSecret,
		"-subject", oidcSubject, "-email", oidcEmail)
	p.WaitHTTP(e.t, wait, issuer+"/.well-known/openid-configuration", http.StatusOK)
	return issuer
}

// startOAuth2Proxy runs oauth2-proxy on a new address of the network, in
// ingress-nginx's auth_request mode for host: it signs users in with the
// provider at issuer and answers /oauth2/auth with X-Auth-Request-User and
// X-Auth-Request-Email.
func startOAuth2Proxy(e *env, issuer, host string) netip.AddrPort {
	e.t.Helper()
	addr := e.addr(oauth2Port)
	p := e.network.Run(e.t, "oauth2-proxy",
		"--provider=oidc", "--oidc-issuer-url="+issuer,
		"--client-id="+oidcClientID, "--client-secret="+oidcClientSecret,
		"--cookie-secret=ramjet-e2e-cookie-secret-32bytes", "--cookie-secure=false",
		"--email-domain=*", "--http-address="+addr.String(), "--reverse-proxy",
		"--set-xauthrequest", "--skip-provider-button",
		"--redirect-url=http://"+host+"/oauth2/callback", "--whitelist-domain="+host)
	p.WaitHTTP(e.t, wait, "http://"+addr.String()+"/ping", http.StatusOK)
	return addr
}

// addr claims a new address of the test's network, with port.
func (e *env) addr(port uint16) netip.AddrPort {
	e.t.Helper()
	a, err := e.network.AddAddr()
	if err != nil {
		e.t.Fatal(err)
	}
	return netip.AddrPortFrom(a, port)
}

// identityEcho starts a member that answers X-Backend: app and, in
// X-Seen-User and X-Seen-Email, the X-Auth-Request-User and
// X-Auth-Request-Email it received.
func identityEcho(e *env) *harness.Backend {
	return e.network.Backend(e.t, "app", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", "app")
		w.Header().Set("X-Seen-User", r.Header.Get("X-Auth-Request-User"))
		w.Header().Set("X-Seen-Email", r.Header.Get("X-Auth-Request-Email"))
	}))
}

// browser is a client with a cookie jar that sends requests for host to
// ramjetd's HTTP listener and the others (the provider's) directly, and
// does not follow redirects.
func browser(t *testing.T, r *harness.Ramjet, host string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if h, _, _ := net.SplitHostPort(addr); h == host {
				addr = r.HTTP
			}
			return dialer.DialContext(ctx, network, addr)
		},
		DisableKeepAlives: true,
	}
	return &http.Client{Transport: transport, Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// expectRedirect checks that GET url with headers is answered by ramjetd
// or the service behind it (not by a member) with a 302 whose Location
// starts with prefix.
func expectRedirect(client *http.Client, url string, headers map[string]string, prefix string) error {
	resp, err := do(client, url, headers)
	if err != nil {
		return err
	}
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("X-Backend") != "" || !strings.HasPrefix(loc, prefix) {
		return fmt.Errorf("%d from backend %q to %q, want 302 to %s…", resp.StatusCode, resp.Header.Get("X-Backend"), loc, prefix)
	}
	return nil
}

// allPrefixed reports whether each of s starts with the prefix of the same
// index.
func allPrefixed(s, prefixes []string) bool {
	for i, p := range prefixes {
		if !strings.HasPrefix(s[i], p) {
			return false
		}
	}
	return true
}

// follow sends GET url and follows redirects (at most max) until an
// answer that is not one, which must be 200. It returns the URLs asked
// for.
func follow(client *http.Client, url string, max int) ([]string, error) {
	hops := []string{url}
	for range max {
		resp, err := do(client, url, nil)
		if err != nil {
			return hops, err
		}
		switch {
		case resp.StatusCode == http.StatusOK:
			return hops, nil
		case resp.StatusCode < 300 || resp.StatusCode > 399:
			return hops, fmt.Errorf("GET %s: %d from backend %q", url, resp.StatusCode, resp.Header.Get("X-Backend"))
		}
		next, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		if err != nil {
			return hops, err
		}
		url = next.String()
		hops = append(hops, url)
	}
	return hops, fmt.Errorf("more than %d redirects", max)
}
