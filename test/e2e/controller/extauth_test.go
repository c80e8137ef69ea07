package controller

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// The token the authentication service of TestExternalAuth accepts, and
// the user it answers for it.
const (
	authToken = "letmein"
	authUser  = "alice"
)

// TestExternalAuth: an Ingress with auth-url naming an authentication
// service of its own (an IP address of the network, which the address rule
// allows) and auth-response-headers. The service lets a request with the
// right X-Token through, answering X-Auth-Request-User, and refuses the
// others with 401. A request with the token reaches the member with the
// service's X-Auth-Request-User, never the one the client forged; one
// without is answered 401 with the service's WWW-Authenticate and never
// reaches the member; once the service is down, requests answer 500.
func TestExternalAuth(t *testing.T) {
	e := newEnv(t)
	auth := authService(e)
	e.service("web", userEcho(e))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("guarded", e.host("guarded"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/auth-url":              auth.URL + "check",
		"nginx.ingress.kubernetes.io/auth-response-headers": "X-Auth-Request-User",
	}))
	url := "http://" + e.host("guarded") + "/private"
	forged := map[string]string{"X-Auth-Request-User": "mallory"}

	allowed := map[string]string{"X-Token": authToken, "X-Auth-Request-User": "mallory"}
	eventually(t, wait, "a request with the token reaches the member", func() error {
		return expectAnswer(client, url, allowed, http.StatusOK, "web")
	})
	resp := send(t, client, url, allowed)
	if got := resp.Header.Get("X-Seen-User"); got != authUser {
		t.Errorf("the member saw X-Auth-Request-User %q, want %q (the service's)", got, authUser)
	}

	resp = send(t, client, url, forged)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Backend") != "" {
		t.Errorf("a request without the token: %d from backend %q, want 401 from ramjetd", resp.StatusCode, resp.Header.Get("X-Backend"))
	}
	if got, want := resp.Header.Get("WWW-Authenticate"), `Bearer realm="test"`; got != want {
		t.Errorf("WWW-Authenticate %q, want the service's %q", got, want)
	}

	auth.Close()
	eventually(t, wait, "with the service down, a request with the token answers 500", func() error {
		return expectAnswer(client, url, allowed, http.StatusInternalServerError, "")
	})
}

// TestExternalAuthProxySetHeaders: auth-proxy-set-headers names a
// ConfigMap whose headers reach the authentication service, one of them
// with a variable: the service lets a request through only with X-Tenant:
// shop (which the client cannot forge: the ConfigMap's value replaces it)
// and answers a user made of the headers it got. Changing the ConfigMap
// changes the subrequest without touching the Ingress; deleting it makes the
// object not served (404, InvalidAnnotation).
func TestExternalAuthProxySetHeaders(t *testing.T) {
	e := newEnv(t)
	auth := e.network.Backend(e.t, "auth", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Tenant") != "shop" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Auth-Request-User", r.Header.Get("X-Tenant")+"@"+r.Header.Get("X-Original-Host"))
	}))
	e.service("web", userEcho(e))
	r := e.startRamjet()
	client := r.Client(nil)
	e.apply(`
apiVersion: v1
kind: ConfigMap
metadata: {name: auth-headers, namespace: NS}
data: {X-Tenant: shop, X-Original-Host: $host}
`)
	e.create(e.ingress("guarded", e.host("guarded"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/auth-url":               auth.URL + "check",
		"nginx.ingress.kubernetes.io/auth-proxy-set-headers": "auth-headers",
		"nginx.ingress.kubernetes.io/auth-response-headers":  "X-Auth-Request-User",
	}))
	url := "http://" + e.host("guarded") + "/"
	forged := map[string]string{"X-Tenant": "other"}

	eventually(t, wait, "a request reaches the member, the ConfigMap's headers sent to the service", func() error {
		return expectAnswer(client, url, forged, http.StatusOK, "web")
	})
	if got, want := send(t, client, url, forged).Header.Get("X-Seen-User"), "shop@"+e.host("guarded"); got != want {
		t.Errorf("the member saw the user %q, want %q (X-Tenant from the ConfigMap, X-Original-Host the request's $host)", got, want)
	}

	e.apply(`
apiVersion: v1
kind: ConfigMap
metadata: {name: auth-headers, namespace: NS}
data: {X-Tenant: nobody, X-Original-Host: $host}
`)
	eventually(t, wait, "after the ConfigMap changed, the service refuses", func() error {
		return expectAnswer(client, url, nil, http.StatusUnauthorized, "")
	})

	if err := cluster.Client.CoreV1().ConfigMaps(e.ns).Delete(e.ctx, "auth-headers", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "without the ConfigMap, the object is not served", func() error {
		return expectAnswer(client, url, nil, http.StatusNotFound, "")
	})
	e.waitEvent("guarded", "InvalidAnnotation")
}

// TestGlobalExternalAuth: with --global-auth-url naming the service of
// TestExternalAuth, an Ingress without annotations is authenticated (401
// without the token, the member with it), and one saying
// enable-global-auth: "false" is not.
func TestGlobalExternalAuth(t *testing.T) {
	e := newEnv(t)
	auth := authService(e)
	e.service("web", userEcho(e))
	r := e.startRamjet("--global-auth-url=" + auth.URL + "check")
	client := r.Client(nil)
	e.create(e.ingress("plain", e.host("plain"), "web", nil))
	e.create(e.ingress("exempt", e.host("exempt"), "web", map[string]string{"nginx.ingress.kubernetes.io/enable-global-auth": "false"}))
	plain, exempt := "http://"+e.host("plain")+"/", "http://"+e.host("exempt")+"/"

	eventually(t, wait, "the exempt Ingress is served without the token", func() error {
		return expectAnswer(client, exempt, nil, http.StatusOK, "web")
	})
	eventually(t, wait, "the plain Ingress answers 401 without the token", func() error {
		return expectAnswer(client, plain, nil, http.StatusUnauthorized, "")
	})
	if err := expectAnswer(client, plain, map[string]string{"X-Token": authToken}, http.StatusOK, "web"); err != nil {
		t.Errorf("the plain Ingress with the token: %v", err)
	}
}

// authService starts an authentication service in the test's network: a
// request with X-Token: authToken passes with X-Auth-Request-User:
// authUser, the others get 401 with a WWW-Authenticate.
func authService(e *env) *harness.Backend {
	return e.network.Backend(e.t, "auth", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != authToken {
			w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Auth-Request-User", authUser)
	}))
}

// userEcho starts a member that answers X-Backend: web and, in
// X-Seen-User, the X-Auth-Request-User it received.
func userEcho(e *env) *harness.Backend {
	return e.network.Backend(e.t, "web", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", "web")
		w.Header().Set("X-Seen-User", r.Header.Get("X-Auth-Request-User"))
	}))
}

// send sends GET url with headers through client and returns the answer,
// its body read.
func send(t *testing.T, client *http.Client, url string, headers map[string]string) *http.Response {
	t.Helper()
	resp, err := do(client, url, headers)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func do(client *http.Client, url string, headers map[string]string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp, err
}

// expectAnswer checks that GET url with headers answers status from
// backend ("" for ramjetd itself).
func expectAnswer(client *http.Client, url string, headers map[string]string, status int, backend string) error {
	resp, err := do(client, url, headers)
	if err != nil {
		return err
	}
	if resp.StatusCode != status || resp.Header.Get("X-Backend") != backend {
		return fmt.Errorf("%d from backend %q, want %d from %q", resp.StatusCode, resp.Header.Get("X-Backend"), status, backend)
	}
	return nil
}
