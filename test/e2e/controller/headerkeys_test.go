package controller

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// TestForwardedPrefix: x-forwarded-prefix with rewrite-target. The member
// gets the rewritten path and X-Forwarded-Prefix with the annotation's
// value (a submatch of the path replaced), in place of the one the client
// sent; on an Ingress that does not rewrite, the annotation adds nothing
// and the client's header passes.
func TestForwardedPrefix(t *testing.T) {
	e := newEnv(t)
	e.service("echo", e.network.Backend(t, "echo", prefixEcho()))
	r := e.startRamjet()
	client := r.Client(nil)
	regex := func(name, path string, annotations map[string]string) {
		ing := e.ingress(name, e.host(name), "echo", annotations)
		p := &ing.Spec.Rules[0].HTTP.Paths[0]
		p.Path, p.PathType = path, new(networkingv1.PathTypeImplementationSpecific)
		e.create(ing)
	}
	regex("api", "/api(/|$)(.*)", map[string]string{
		"nginx.ingress.kubernetes.io/rewrite-target":     "/$2",
		"nginx.ingress.kubernetes.io/x-forwarded-prefix": "/api",
	})
	regex("versioned", "/(v[0-9]+)/(.*)", map[string]string{
		"nginx.ingress.kubernetes.io/rewrite-target":     "/$2",
		"nginx.ingress.kubernetes.io/x-forwarded-prefix": "/$1",
	})
	e.create(e.ingress("plain", e.host("plain"), "echo", map[string]string{"nginx.ingress.kubernetes.io/x-forwarded-prefix": "/api"}))
	for name, path := range map[string]string{"api": "/api/", "versioned": "/v1/", "plain": "/"} {
		expect(t, client, "http://"+e.host(name)+path, "echo")
	}

	for _, tc := range []struct {
		name, host, path, sent string
		wantPath, wantPrefix   string
	}{
		{"rewritten", "api", "/api/users?page=2", "", "/users?page=2", "/api"},
		{"the client's replaced", "api", "/api/users", "/evil", "/users", "/api"},
		{"a submatch", "versioned", "/v2/items/7", "/evil", "/items/7", "/v2"},
		{"not rewritten: none of its own", "plain", "/api/users", "", "/api/users", ""},
		{"not rewritten: the client's passes", "plain", "/api/users", "/client", "/api/users", "/client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := map[string]string{}
			if tc.sent != "" {
				headers["X-Forwarded-Prefix"] = tc.sent
			}
			resp := send(t, client, "http://"+e.host(tc.host)+tc.path, headers)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Backend") != "echo" {
				t.Fatalf("%d from %q, want 200 from echo", resp.StatusCode, resp.Header.Get("X-Backend"))
			}
			if got, prefix := resp.Header.Get("X-Seen-Path"), resp.Header.Get("X-Seen-Prefix"); got != tc.wantPath || prefix != tc.wantPrefix {
				t.Errorf("GET %s (X-Forwarded-Prefix %q): the member got %s with X-Forwarded-Prefix %q, want %s with %q",
					tc.path, tc.sent, got, prefix, tc.wantPath, tc.wantPrefix)
			}
		})
	}
}

// prefixEcho is a member answering X-Backend: echo, the request's path and
// query in X-Seen-Path and its X-Forwarded-Prefix headers (joined by
// commas) in X-Seen-Prefix.
func prefixEcho() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", "echo")
		w.Header().Set("X-Seen-Path", r.URL.RequestURI())
		w.Header().Set("X-Seen-Prefix", strings.Join(r.Header.Values("X-Forwarded-Prefix"), ","))
	})
}

// TestAccessLogOff: with ramjetd's access log on (server.access_log), the
// requests of an Ingress with enable-access-log: "false" get no line in
// ramjetd's log, while those of another Ingress on the same member do. The
// key is per path, as nginx's access_log off in a location: an Ingress
// saying "false" for the path /hush of the logged host leaves only that
// path out.
func TestAccessLogOff(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	r := e.startRamjetWith(harness.RamjetOptions{Server: "  access_log: true\n"})
	client := r.Client(nil)
	e.create(e.ingress("logged", e.host("logged"), "web", nil))
	off := map[string]string{"nginx.ingress.kubernetes.io/enable-access-log": "false"}
	e.create(e.ingress("quiet", e.host("quiet"), "web", off))
	hush := e.ingress("hush", e.host("logged"), "web", off)
	hush.Spec.Rules[0].HTTP.Paths[0].Path = "/hush"
	e.create(hush)
	expect(t, client, "http://"+e.host("logged")+"/", "web")
	expect(t, client, "http://"+e.host("quiet")+"/", "web")
	expect(t, client, "http://"+e.host("logged")+"/hush", "web")

	// Quiet requests before and between logged ones: once the last logged
	// one is in the log, the quiet ones, answered before it, would be too.
	for i := range 2 {
		for _, url := range []string{
			fmt.Sprintf("http://%s/quiet-marker-%d", e.host("quiet"), i),
			fmt.Sprintf("http://%s/hush/quiet-marker-path-%d", e.host("logged"), i),
			fmt.Sprintf("http://%s/logged-marker-%d", e.host("logged"), i),
		} {
			if err := check(t.Context(), client, url, "web"); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, wait, "the logged Ingress's requests are in ramjetd's access log", func() error {
		log := r.Log("ramjetd")
		for i := range 2 {
			if !accessLogged(log, fmt.Sprintf("/logged-marker-%d", i)) {
				return errors.New("not in the log yet")
			}
		}
		return nil
	})
	log := r.Log("ramjetd")
	for i := range 2 {
		for _, path := range []string{fmt.Sprintf("/quiet-marker-%d", i), fmt.Sprintf("/hush/quiet-marker-path-%d", i)} {
			if strings.Contains(log, path) {
				t.Errorf("ramjetd's log has a line of a path with enable-access-log: \"false\" (%s)", path)
			}
		}
	}
}

// accessLogged reports whether log has an access log line of a request
// for path.
func accessLogged(log, path string) bool {
	for line := range strings.SplitSeq(log, "\n") {
		if strings.Contains(line, "msg=request") && strings.Contains(line, "path="+path+" ") {
			return true
		}
	}
	return false
}

// startRamjetWith is startRamjet with options of the harness (the flags
// are added to opts.Args).
func (e *env) startRamjetWith(opts harness.RamjetOptions, args ...string) *harness.Ramjet {
	e.t.Helper()
	opts.Args = append(append([]string{"--watch-namespace=" + e.ns, "--election-id=ramjet-" + e.ns}, args...), opts.Args...)
	return harness.StartRamjet(e.t, cluster, opts)
}
