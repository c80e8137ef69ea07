package controller

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// The affinity annotations.
const (
	affinity         = "nginx.ingress.kubernetes.io/affinity"
	affinityMode     = "nginx.ingress.kubernetes.io/affinity-mode"
	affinityCanary   = "nginx.ingress.kubernetes.io/affinity-canary-behavior"
	canaryOn         = "nginx.ingress.kubernetes.io/canary"
	canaryByHeader   = "nginx.ingress.kubernetes.io/canary-by-header"
	canaryWeight     = "nginx.ingress.kubernetes.io/canary-weight"
	affinityCookie   = "INGRESSCOOKIE"
	affinityRequests = 16 // clients of an affinity test
)

// TestAffinityPersistent: two Ingresses with cookie affinity on a Service
// of two members, one in affinity-mode persistent, one balanced. Once the
// Service grows to five members, every client of the persistent one keeps
// its member (its cookie unchanged), where some of the balanced one's move
// to the new members; a reload of ramjetd's configuration moves none. Once
// a member is gone, its clients get another one and a new cookie, and keep
// that one.
func TestAffinityPersistent(t *testing.T) {
	e := newEnv(t)
	var members []*harness.Backend
	for i := range 5 {
		members = append(members, e.backend(fmt.Sprintf("m%d", i)))
	}
	e.service("app", members[:2]...)
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("persistent", e.host("persistent"), "app", map[string]string{affinity: "cookie", affinityMode: "persistent"}))
	e.create(e.ingress("balanced", e.host("balanced"), "app", map[string]string{affinity: "cookie", affinityMode: "balanced"}))
	persistent, balanced := "http://"+e.host("persistent")+"/", "http://"+e.host("balanced")+"/"
	first := map[string][]stickyClient{}
	for _, url := range []string{persistent, balanced} {
		waitMember(t, client, url, "m0", "m1")
		first[url] = newClients(t, client, url)
	}

	e.scale("app", members...)
	for _, url := range []string{persistent, balanced} {
		waitMember(t, client, url, "m2", "m3", "m4")
	}
	for _, c := range first[persistent] {
		if err := c.stays(client, persistent); err != nil {
			t.Errorf("persistent, after members were added: %v", err)
		}
	}
	moved := 0
	for _, c := range first[balanced] {
		if c.stays(client, balanced) != nil {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("balanced: none of %d clients moved when the members went from 2 to 5: the test shows nothing", affinityRequests)
	}

	// A reload of ramjetd's configuration (another Ingress) moves nobody.
	before := mustGeneration(t, r)
	e.create(e.ingress("other", e.host("other"), "app", nil))
	waitMember(t, client, "http://"+e.host("other")+"/", "m0", "m1", "m2", "m3", "m4")
	if mustGeneration(t, r) == before {
		t.Fatal("creating the Ingress other did not reload ramjetd")
	}
	for _, c := range first[persistent] {
		if err := c.stays(client, persistent); err != nil {
			t.Errorf("persistent, after a reload: %v", err)
		}
	}

	e.scale("app", members[1:]...)
	var orphans []stickyClient
	for _, c := range first[persistent] {
		if c.member == "m0" {
			orphans = append(orphans, c)
		} else if err := c.stays(client, persistent); err != nil {
			t.Errorf("persistent, after m0 left: %v", err)
		}
	}
	if len(orphans) == 0 {
		t.Fatalf("no client of %d was on m0", affinityRequests)
	}
	for _, c := range orphans {
		var moved stickyClient
		eventually(t, wait, "a client of m0 gets another member and a new cookie", func() error {
			member, cookie, err := stickyGet(client, persistent, c.cookie, nil)
			switch {
			case err != nil:
				return err
			case member == "m0" || cookie == "":
				return fmt.Errorf("answered by %s with cookie %q", member, cookie)
			}
			moved = stickyClient{member, cookie}
			return nil
		})
		if err := moved.stays(client, persistent); err != nil {
			t.Errorf("a client of m0, moved to %s: %v", moved.member, err)
		}
	}
}

// stickyClient is a client of an affinity test: the member that served it
// first and the cookie it got.
type stickyClient struct{ member, cookie string }

// newClients makes affinityRequests clients of url, each by a request
// without a cookie.
func newClients(t *testing.T, client *http.Client, url string) []stickyClient {
	t.Helper()
	var out []stickyClient
	for range affinityRequests {
		member, cookie, err := stickyGet(client, url, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if member == "" || cookie == "" {
			t.Fatalf("GET %s without a cookie: answered by %q with cookie %q, want a member and a cookie", url, member, cookie)
		}
		out = append(out, stickyClient{member, cookie})
	}
	return out
}

// stays returns an error unless five requests of c to url are answered by
// its member, without a new cookie.
func (c stickyClient) stays(client *http.Client, url string) error {
	for range 5 {
		member, cookie, err := stickyGet(client, url, c.cookie, nil)
		switch {
		case err != nil:
			return err
		case member != c.member || cookie != "":
			return fmt.Errorf("a client of %s was answered by %s with cookie %q", c.member, member, cookie)
		}
	}
	return nil
}

// waitMember waits until a request to url without a cookie is answered by
// one of members.
func waitMember(t *testing.T, client *http.Client, url string, members ...string) {
	t.Helper()
	eventually(t, wait, fmt.Sprintf("GET %s answered by one of %v", url, members), func() error {
		member, _, err := stickyGet(client, url, "", nil)
		if err != nil {
			return err
		}
		if !slices.Contains(members, member) {
			return fmt.Errorf("answered by %q", member)
		}
		return nil
	})
}

// stickyGet sends GET url with the affinity cookie (none when empty) and
// headers, and returns the member that answered 200 (X-Backend) and the
// affinity cookie the answer set, if any.
func stickyGet(client *http.Client, url, cookie string, headers map[string]string) (member, setCookie string, err error) {
	h := map[string]string{}
	for k, v := range headers {
		h[k] = v
	}
	if cookie != "" {
		h["Cookie"] = affinityCookie + "=" + cookie
	}
	resp, err := do(client, url, h)
	if err != nil {
		return "", "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("GET %s: %d from %q", url, resp.StatusCode, resp.Header.Get("X-Backend"))
	}
	for _, c := range resp.Cookies() {
		if c.Name == affinityCookie {
			setCookie = c.Value
		}
	}
	return resp.Header.Get("X-Backend"), setCookie, nil
}

// TestAffinityCanarySticky: a main Ingress with cookie affinity and its
// canary (canary-by-header: X-Canary, canary-weight: "0"), on two hosts,
// one with the canary's affinity-canary-behavior sticky (the default), one
// legacy. On both, a client of the main pool stays there even when it asks
// for the canary (ingress-nginx looks at the main's affinity first). Sticky:
// a client the canary served (asked for by the header) gets a cookie and
// stays on the canary without the header. Legacy: the canary, without
// affinity of its own, sets no cookie, and its client goes back to the
// main pool without the header.
func TestAffinityCanarySticky(t *testing.T) {
	e := newEnv(t)
	e.service("main", e.backend("main0"), e.backend("main1"))
	e.service("canary", e.backend("canary"))
	r := e.startRamjet()
	client := r.Client(nil)
	for _, behavior := range []string{"sticky", "legacy"} {
		host := e.host(behavior)
		e.create(e.ingress("main-"+behavior, host, "main", map[string]string{affinity: "cookie"}))
		e.create(e.ingress("canary-"+behavior, host, "canary", map[string]string{
			canaryOn: "true", canaryByHeader: "X-Canary", canaryWeight: "0", affinityCanary: behavior,
		}))
	}
	toCanary := map[string]string{"X-Canary": "always"}
	for _, behavior := range []string{"sticky", "legacy"} {
		t.Run(behavior, func(t *testing.T) {
			url := "http://" + e.host(behavior) + "/"
			eventually(t, wait, "the canary is served", func() error {
				member, _, err := stickyGet(client, url, "", toCanary)
				if err == nil && member != "canary" {
					err = fmt.Errorf("X-Canary: always answered by %q", member)
				}
				return err
			})
			member, canaryCookie, err := stickyGet(client, url, "", toCanary)
			if err != nil {
				t.Fatal(err)
			}
			if member != "canary" || (behavior == "sticky" && canaryCookie == "") {
				t.Fatalf("X-Canary: always without a cookie: answered by %q with cookie %q, want the canary with a cookie", member, canaryCookie)
			}
			mainClient := newClients(t, client, url)[0]
			if !slices.Contains([]string{"main0", "main1"}, mainClient.member) {
				t.Fatalf("a request without the header went to %s", mainClient.member)
			}

			got, _, err := stickyGet(client, url, mainClient.cookie, toCanary)
			if err == nil && got != mainClient.member {
				err = errors.New("answered by " + got)
			}
			if err != nil {
				t.Errorf("a client of %s asking for the canary: %v, want %s", mainClient.member, err, mainClient.member)
			}
			switch behavior {
			case "sticky":
				if err := (stickyClient{"canary", canaryCookie}).stays(client, url); err != nil {
					t.Errorf("the canary's client, without the header: %v", err)
				}
			case "legacy":
				if canaryCookie != "" {
					t.Errorf("the canary, without affinity of its own, set the cookie %q", canaryCookie)
				}
				got, _, err := stickyGet(client, url, canaryCookie, nil)
				if err == nil && got == "canary" {
					err = errors.New("answered by the canary")
				}
				if err != nil {
					t.Errorf("the canary's client, without the header: %v, want the main pool", err)
				}
			}
		})
	}
}

// TestAffinityChangeOnFailure: two Ingresses with cookie affinity on a
// Service of two members, one with session-cookie-change-on-failure:
// "true". Once a client's member stops (its connections refused), its
// request is served by the other member on both; with "true" the answer
// carries a new cookie, which then keeps the client there without another;
// with "false" (the default) the client keeps its cookie, and each of its
// requests is tried again on the other member.
func TestAffinityChangeOnFailure(t *testing.T) {
	e := newEnv(t)
	m0, m1 := e.backend("m0"), e.backend("m1")
	e.service("app", m0, m1)
	r := e.startRamjet()
	client := r.Client(nil)
	change := "nginx.ingress.kubernetes.io/session-cookie-change-on-failure"
	e.create(e.ingress("change", e.host("change"), "app", map[string]string{affinity: "cookie", change: "true"}))
	e.create(e.ingress("keep", e.host("keep"), "app", map[string]string{affinity: "cookie", change: "false"}))
	clients := map[string]stickyClient{}
	for _, name := range []string{"change", "keep"} {
		url := "http://" + e.host(name) + "/"
		waitMember(t, client, url, "m0", "m1")
		for _, c := range newClients(t, client, url) {
			if c.member == "m0" {
				clients[name] = c
				break
			}
		}
		if clients[name].cookie == "" {
			t.Fatalf("%s: none of %d clients was on m0", name, affinityRequests)
		}
	}
	m0.Close()

	t.Run("true", func(t *testing.T) {
		url := "http://" + e.host("change") + "/"
		member, cookie, err := stickyGet(client, url, clients["change"].cookie, nil)
		if err != nil || member != "m1" || cookie == "" {
			t.Fatalf("a client of m0, m0 stopped: answered by %q with cookie %q (%v), want m1 with a new cookie", member, cookie, err)
		}
		if err := (stickyClient{"m1", cookie}).stays(client, url); err != nil {
			t.Errorf("with the new cookie: %v", err)
		}
	})
	t.Run("false", func(t *testing.T) {
		url := "http://" + e.host("keep") + "/"
		for range 3 {
			member, cookie, err := stickyGet(client, url, clients["keep"].cookie, nil)
			if err != nil || member != "m1" || cookie != "" {
				t.Fatalf("a client of m0, m0 stopped: answered by %q with cookie %q (%v), want m1 and no new cookie", member, cookie, err)
			}
		}
	})
}

// TestHashSubset: upstream-hash-by: $http_x_user_id with
// upstream-hash-by-subset: "true" and a subset size of 2, on a Service of
// four members: each user's requests reach exactly two members (its
// subset, at random between them), and the users together reach all
// four.
func TestHashSubset(t *testing.T) {
	e := newEnv(t)
	var members []*harness.Backend
	for i := range 4 {
		members = append(members, e.backend(fmt.Sprintf("m%d", i)))
	}
	e.service("app", members...)
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("subsets", e.host("subsets"), "app", map[string]string{
		"nginx.ingress.kubernetes.io/upstream-hash-by":             "$http_x_user_id",
		"nginx.ingress.kubernetes.io/upstream-hash-by-subset":      "true",
		"nginx.ingress.kubernetes.io/upstream-hash-by-subset-size": "2",
	}))
	url := "http://" + e.host("subsets") + "/"
	waitMember(t, client, url, "m0", "m1", "m2", "m3")
	all := map[string]bool{}
	for user := range 24 {
		seen := map[string]bool{}
		for range 30 {
			member, _, err := stickyGet(client, url, "", map[string]string{"X-User-Id": fmt.Sprintf("user-%d", user)})
			if err != nil {
				t.Fatal(err)
			}
			seen[member], all[member] = true, true
		}
		if len(seen) != 2 {
			t.Errorf("user-%d reached %d members (%v), want its subset of 2", user, len(seen), seen)
		}
	}
	if len(all) != 4 {
		t.Errorf("24 users reached %d members (%v), want all 4", len(all), all)
	}
}
