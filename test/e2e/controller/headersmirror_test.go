package controller

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// TestCustomHeaders: custom-headers names a ConfigMap (namespace/name)
// whose entries are set on the answers, the member's header of the same
// name replaced, a $ sent as it is. Changing the ConfigMap changes the
// answers without touching the Ingress; an entry that
// --global-allowed-response-headers does not list makes the object not
// served (404, InvalidAnnotation).
func TestCustomHeaders(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.network.Backend(t, "web", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", "web")
		w.Header().Set("X-Frame-Options", "ALLOWALL")
	})))
	r := e.startRamjet("--global-allowed-response-headers=X-Frame-Options,X-Custom")
	client := r.Client(nil)
	e.apply(`
apiVersion: v1
kind: ConfigMap
metadata: {name: headers, namespace: NS}
data: {X-Frame-Options: DENY, X-Custom: $remote_addr}
`)
	e.create(e.ingress("web", e.host("web"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/custom-headers": e.ns + "/headers",
	}))
	url := "http://" + e.host("web") + "/"
	headers := func(frame, custom string) func() error {
		return func() error {
			a, err := get(t.Context(), client, url)
			switch {
			case err != nil:
				return err
			case a.status != http.StatusOK || a.backend != "web":
				return fmt.Errorf("got %s, want 200 from web", a)
			case a.header.Get("X-Frame-Options") != frame || a.header.Get("X-Custom") != custom || len(a.header.Values("X-Frame-Options")) != 1:
				return fmt.Errorf("X-Frame-Options %q, X-Custom %q; want %q, %q", a.header.Values("X-Frame-Options"), a.header.Get("X-Custom"), frame, custom)
			}
			return nil
		}
	}
	eventually(t, wait, "the answers carry the ConfigMap's headers", headers("DENY", "$remote_addr"))

	e.apply(`
apiVersion: v1
kind: ConfigMap
metadata: {name: headers, namespace: NS}
data: {X-Frame-Options: SAMEORIGIN, X-Custom: two}
`)
	eventually(t, wait, "after the ConfigMap changed, the answers carry its new values", headers("SAMEORIGIN", "two"))

	e.apply(`
apiVersion: v1
kind: ConfigMap
metadata: {name: headers, namespace: NS}
data: {X-Frame-Options: DENY, X-Not-Allowed: "1"}
`)
	expect(t, client, url, "")
	e.waitEvent("web", "InvalidAnnotation")
}

// copySeen is what the mirror target received.
type copySeen struct {
	uri, host, body string
}

// mirrorTarget starts a backend that reports each request it receives and
// answers only when the test ends: a copy that held up the client's answer
// would make the test time out.
func mirrorTarget(e *env, name string) (*harness.Backend, <-chan copySeen) {
	got := make(chan copySeen, 16)
	release := make(chan struct{})
	e.t.Cleanup(func() { close(release) })
	b := e.network.Backend(e.t, name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- copySeen{uri: r.RequestURI, host: r.Host, body: string(body)}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	return b, got
}

// TestMirror: mirror-target copies the requests of an Ingress to a target
// that never answers while the test runs: the client's answers come from
// the member all the same. The copies carry the client's request URI
// ($request_uri, before the rewrite), mirror-host as Host and the body;
// with mirror-request-body: off no body. A target on loopback is refused
// (AddressRefused) and the Ingress is served without mirroring.
func TestMirror(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	shadow, copies := mirrorTarget(e, "shadow")
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("mirrored", e.host("mirrored"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/mirror-target": "http://" + shadow.Addr + "$request_uri",
		"nginx.ingress.kubernetes.io/mirror-host":   "shadow.test",
	}))
	e.create(e.ingress("nobody", e.host("nobody"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/mirror-target":       "http://" + shadow.Addr + "/copies",
		"nginx.ingress.kubernetes.io/mirror-request-body": "off",
	}))
	loopback := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(harness.BackendPort)))
	e.create(e.ingress("loopback", e.host("loopback"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/mirror-target": "http://" + loopback + "$request_uri",
	}))

	mirrored := "http://" + e.host("mirrored") + "/path?q="
	expect(t, client, mirrored+"get", "web")
	post(t, client, mirrored+"post", "hello")
	if c := nextCopy(t, copies, "q=post"); c.uri != "/path?q=post" || c.host != "shadow.test" || c.body != "hello" {
		t.Errorf("the copy was %+v; want /path?q=post, Host shadow.test, body hello", c)
	}

	nobody := "http://" + e.host("nobody") + "/other?q="
	expect(t, client, nobody+"get", "web")
	post(t, client, nobody+"post2", "secret")
	if c := nextCopy(t, copies, "q=post2"); c.uri != "/copies?q=post2" || c.host != shadow.IP || c.body != "" {
		t.Errorf("the copy was %+v; want /copies?q=post2, Host %s (the target's), no body", c, shadow.IP)
	}

	expect(t, client, "http://"+e.host("loopback")+"/", "web")
	e.waitEvent("loopback", "AddressRefused")
}

// post sends POST url with body and wants the member's 200 at once: the
// target of the copies never answers.
func post(t *testing.T, client *http.Client, url, body string) {
	t.Helper()
	resp, err := client.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Backend") != "web" {
		t.Fatalf("POST %s: %d from backend %q, want 200 from web", url, resp.StatusCode, resp.Header.Get("X-Backend"))
	}
}

// nextCopy returns the first copy whose request URI holds query, skipping
// the copies of other requests.
func nextCopy(t *testing.T, copies <-chan copySeen, query string) copySeen {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case c := <-copies:
			if strings.Contains(c.uri, query) {
				return c
			}
		case <-deadline:
			t.Fatalf("the mirror target received no copy of the request with %s", query)
		}
	}
}
