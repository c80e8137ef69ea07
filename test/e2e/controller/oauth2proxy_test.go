package controller

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// /oauth2/auth at its address), auth-signin (http://H/oauth2/start, to
// which ramjetd adds rd) and auth-response-headers; the Ingress oauth2
// sends H's /oauth2 to oauth2-proxy. A browser-like client (a cookie jar;
// H through ramjetd, the provider directly) asks for http://H/private:
// ramjetd redirects it to the sign-in with rd naming the page; following
// the redirects through oauth2-proxy, the provider and the callback brings
// it back to the page with oauth2-proxy's cookie, and the member answers,
// having seen the user and e-mail oauth2-proxy answered, never the ones
// the client forged. A client without the cookie is redirected again.
func TestOAuth2ProxySignIn(t *testing.T) {
	e := newEnv(t)
	s := startSignIn(e, "http", e.host("app"))
	r := e.startRamjet()
	s.ingresses("http://"+s.proxy.String()+"/oauth2/auth", "http://"+s.host+"/oauth2/start", "")
	// rd is ingress-nginx's $scheme://$http_host$escaped_request_uri.
	s.check(t, r, nil, "http://"+s.host+"/oauth2/start?rd=http://"+s.host+"%2Fprivate")
}

// TestOAuth2ProxyHostForm: the same flow in the form oauth2-proxy
// documents for ingress-nginx, on a host H with TLS (a Secret of the
// test's CA, which the client trusts): auth-url https://$host/oauth2/auth,
// so that ramjetd asks itself (its HTTPS listener, with H as Host and
// server name) and the Ingress oauth2 carries the subrequest to
// oauth2-proxy, and auth-signin https://$host/oauth2/start?rd=$escaped_request_uri,
// which ramjetd interpolates and leaves without an rd of its own.
func TestOAuth2ProxyHostForm(t *testing.T) {
	e := newEnv(t)
	host := e.host("app")
	ca := newCA(t, "ramjet e2e CA")
	cert, key := ca.issue(t, host)
	if _, err := cluster.Client.CoreV1().Secrets(e.ns).Create(t.Context(), e.tlsSecret("app-tls", cert, key), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := startSignIn(e, "https", host)
	r := e.startRamjet()
	s.ingresses("https://$host/oauth2/auth", "https://$host/oauth2/start?rd=$escaped_request_uri", "app-tls")
	s.check(t, r, ca.Pool, "https://"+host+"/oauth2/start?rd=%2Fprivate")
}

// signIn is oauth2-proxy and its provider in a test's network, signing
// users in for the pages of scheme://host, with the Services app (the
// member identityEcho) and oauth2-proxy.
type signIn struct {
	e            *env
	scheme, host string
	issuer       string         // the provider's issuer URL
	proxy        netip.AddrPort // oauth2-proxy's address
}

// startSignIn starts the provider, oauth2-proxy and the member, and
// creates their Services.
func startSignIn(e *env, scheme, host string) *signIn {
	e.t.Helper()
	s := &signIn{e: e, scheme: scheme, host: host}
	s.issuer = startOIDC(e)
	s.proxy = startOAuth2Proxy(e, s.issuer, scheme, host)
	e.service("app", identityEcho(e))
	e.servicePort("oauth2-proxy", oauth2Port, s.proxy.Addr().String())
	return s
}

// site is scheme://host.
func (s *signIn) site() string { return s.scheme + "://" + s.host }

// ingresses creates the Ingress app, guarding host's / with auth-url,
// auth-signin and auth-response-headers, and the Ingress oauth2, sending
// host's /oauth2 to oauth2-proxy without authentication; both list host
// under tls with secret, unless it is empty.
func (s *signIn) ingresses(authURL, signinURL, secret string) {
	s.e.t.Helper()
	app := s.e.ingress("app", s.host, "app", map[string]string{
		"nginx.ingress.kubernetes.io/auth-url":              authURL,
		"nginx.ingress.kubernetes.io/auth-signin":           signinURL,
		"nginx.ingress.kubernetes.io/auth-response-headers": "X-Auth-Request-User,X-Auth-Request-Email",
	})
	sign := s.e.ingress("oauth2", s.host, "oauth2-proxy", nil)
	sign.Spec.Rules[0].HTTP.Paths[0].Path = "/oauth2"
	for _, ing := range []*networkingv1.Ingress{app, sign} {
		if secret != "" {
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{s.host}, SecretName: secret}}
		}
		s.e.create(ing)
	}
}

// check runs the sign-in flow against r with browsers trusting roots: the
// page /private redirects to start (exactly), the sign-in path to the
// provider; following the redirects signs the client in, after which the
// member answers the page with the provider's user and e-mail, forged ones
// or not; a client without the cookie is sent to start again.
func (s *signIn) check(t *testing.T, r *harness.Ramjet, roots *x509.CertPool, start string) {
	t.Helper()
	page := s.site() + "/private"
	// Both Ingresses served: the sign-in path reaches oauth2-proxy, which
	// sends the client to the provider, and the page sends a client
	// without oauth2-proxy's cookie to the sign-in.
	anonymous := browser(t, r, s.host, roots)
	eventually(t, wait, "the sign-in path redirects to the provider", func() error {
		return expectRedirect(anonymous, start, nil, s.issuer+"/authorize?")
	})
	eventually(t, wait, "the page redirects to the sign-in", func() error {
		return expectRedirectTo(anonymous, page, nil, start)
	})

	client := browser(t, r, s.host, roots)
	hops, err := follow(client, page, 8)
	if err != nil {
		t.Fatalf("signing in: %v (hops: %s)", err, strings.Join(hops, " → "))
	}
	t.Logf("signed in through %s", strings.Join(hops, " → "))
	want := []string{page, start, s.issuer + "/authorize?", s.site() + "/oauth2/callback?code=", page}
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

	if err := expectRedirectTo(browser(t, r, s.host, roots), page, forged, start); err != nil {
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
// ingress-nginx's auth_request mode for scheme://host: it signs users in
// with the provider at issuer (its callback on that site, its cookies
// Secure when the scheme is https), accepts redirects to host after the
// sign-in, and answers /oauth2/auth with X-Auth-Request-User and
// X-Auth-Request-Email.
func startOAuth2Proxy(e *env, issuer, scheme, host string) netip.AddrPort {
	e.t.Helper()
	addr := e.addr(oauth2Port)
	p := e.network.Run(e.t, "oauth2-proxy",
		"--provider=oidc", "--oidc-issuer-url="+issuer,
		"--client-id="+oidcClientID, "--client-secret="+oidcClientSecret,
		"--cookie-secret=ramjet-e2e-cookie-secret-32bytes", fmt.Sprintf("--cookie-secure=%t", scheme == "https"),
		"--email-domain=*", "--http-address="+addr.String(), "--reverse-proxy",
		"--set-xauthrequest", "--skip-provider-button",
		"--redirect-url="+scheme+"://"+host+"/oauth2/callback", "--whitelist-domain="+host)
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
// ramjetd's HTTPS listener (port 443) or HTTP listener (any other port)
// and the others (the provider's) directly, trusts roots (nil: the
// system's), and does not follow redirects.
func browser(t *testing.T, r *harness.Ramjet, host string, roots *x509.CertPool) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if h, port, _ := net.SplitHostPort(addr); h == host {
				addr = r.HTTP
				if port == "443" {
					addr = r.HTTPS
				}
			}
			return dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		DisableKeepAlives: true,
	}
	return &http.Client{Transport: transport, Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// expectRedirect checks that GET url with headers is answered by ramjetd
// or the service behind it (not by a member) with a 302 whose Location
// starts with prefix.
func expectRedirect(client *http.Client, url string, headers map[string]string, prefix string) error {
	loc, err := redirectOf(client, url, headers)
	if err == nil && !strings.HasPrefix(loc, prefix) {
		err = fmt.Errorf("302 to %q, want 302 to %s…", loc, prefix)
	}
	return err
}

// expectRedirectTo is expectRedirect for a Location that must be want.
func expectRedirectTo(client *http.Client, url string, headers map[string]string, want string) error {
	loc, err := redirectOf(client, url, headers)
	if err == nil && loc != want {
		err = fmt.Errorf("302 to %q, want 302 to %q", loc, want)
	}
	return err
}

// redirectOf returns the Location of the answer to GET url with headers,
// which must be a 302 not answered by a member.
func redirectOf(client *http.Client, url string, headers map[string]string) (string, error) {
	resp, err := do(client, url, headers)
	if err != nil {
		return "", err
	}
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("X-Backend") != "" {
		return "", fmt.Errorf("%d from backend %q to %q, want 302 from ramjetd or the service", resp.StatusCode, resp.Header.Get("X-Backend"), loc)
	}
	return loc, nil
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
