package controller

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitFor waits until the load has sent more requests (answered or not)
// from now: some are sent while something is down.
func (l *load) waitFor(t testing.TB, more int64, what string) {
	t.Helper()
	from := l.ok.Load() + l.failed.Load()
	eventually(t, wait, fmt.Sprintf("%d requests %s", more, what), func() error {
		if n := l.ok.Load() + l.failed.Load() - from; n < more {
			return fmt.Errorf("%d requests", n)
		}
		return nil
	})
}

// TestRefusedReloadKeepsServing: when ramjetd refuses a configuration the
// controller built (here the https listener's default certificate, a file
// of the base, has become unreadable: ramjetd reads it on every reload, the
// controller never does), traffic stays on the last accepted configuration
// without a failed request, the refused configuration is not left in
// ramjet.yaml for a restarting ramjetd, ramjet_ingress_reload_failures_total
// rises, endpoints still reach the pools ramjetd has, and the controller
// retries until ramjetd accepts.
func TestRefusedReloadKeepsServing(t *testing.T) {
	s := newSite(t, "--retry=300ms")
	e, r, client := s.env, s.r, s.client

	// The operator gives the https listener a default certificate from
	// files (a mounted Secret, say) and the controller restarts with that
	// base; ramjetd reloads it (listeners keep their addresses).
	ca := newCA(t, "default certificate CA")
	cert, key := ca.issue(t, "default.invalid")
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "default.crt"), filepath.Join(dir, "default.key")
	for path, data := range map[string][]byte{certPath: cert, keyPath: key} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.StopController()
	base := fmt.Sprintf(`server:
  listeners:
    http: {address: %q}
    https: {address: %q, tls: {cert_file: %q, key_file: %q}}
  health: {address: %q}
  admin: {socket: %q}
`, r.HTTP, r.HTTPS, certPath, keyPath, r.Health, r.AdminSocket)
	// The harness's StartController reads the base from Dir/base.yaml.
	if err := os.WriteFile(filepath.Join(r.Dir, "base.yaml"), []byte(base), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.StartController(); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "the default certificate from the files", func() error {
		a, err := get(t.Context(), client, "https://"+e.host("unnamed")+"/")
		if err != nil {
			return err
		}
		if cn, _, err := peer(a); err != nil || cn != "default.invalid" {
			return fmt.Errorf("certificate CN %q (%v)", cn, err)
		}
		return nil
	})
	gen := mustGeneration(t, r)
	failures, err := metric(t.Context(), r, "ramjet_ingress_reload_failures_total")
	if err != nil {
		t.Fatal(err)
	}

	// The key file breaks: the next configuration (a new Ingress) is
	// refused.
	l := startLoad(client, s.url, "web", "web2")
	if err := os.WriteFile(keyPath, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	added := "http://" + e.host("added") + "/"
	e.create(e.ingress("added", e.host("added"), "web", nil))
	eventually(t, wait, "ramjet_ingress_reload_failures_total rises", func() error {
		now, err := metric(t.Context(), r, "ramjet_ingress_reload_failures_total")
		if err != nil {
			return err
		}
		if now <= failures {
			return fmt.Errorf("%v, was %v", now, failures)
		}
		return nil
	})
	l.waitFor(t, 50, "while ramjetd refuses")
	if err := check(t.Context(), client, added, ""); err != nil {
		t.Errorf("the Ingress of the refused configuration: %v", err)
	}
	if now := mustGeneration(t, r); now != gen {
		t.Errorf("ramjetd's generation went from %d to %d while it refused", gen, now)
	}
	// The pools ramjetd has still follow their endpoints.
	e.scale("web", s.backends["web"], e.backend("web2"))
	eventually(t, wait, "the new endpoint answers while ramjetd refuses", func() error {
		a, err := get(t.Context(), client, s.url)
		if err == nil && a.backend != "web2" {
			err = fmt.Errorf("answered by %s", a)
		}
		return err
	})
	// A ramjetd restarting now must find the configuration it serves: the
	// refused one is there only from its write to ramjetd's answer, each
	// retry.
	eventually(t, wait, r.Config+" holds the configuration ramjetd serves", func() error {
		data, err := os.ReadFile(r.Config)
		if err == nil && strings.Contains(string(data), e.host("added")) {
			err = errors.New("it holds the refused one")
		}
		return err
	})
	if !strings.Contains(r.Log("ramjet-ingress"), "server.listeners.https.tls") {
		t.Errorf("the controller's log does not give ramjetd's reason (server.listeners.https.tls: ...)")
	}

	// The file is repaired: the retry loads the waiting configuration.
	if err := os.WriteFile(keyPath, key, 0o600); err != nil {
		t.Fatal(err)
	}
	expect(t, client, added, "web")
	l.finish(t)
	if now := mustGeneration(t, r); now <= gen {
		t.Errorf("generation %d after the repair, was %d", now, gen)
	}
}

// TestAPIServerRestart: the API server stops, longer than the Lease's
// renew deadline, and comes back while traffic flows: no request fails,
// the controller stays ready (ramjetd serves), it loses the Lease and
// takes it again, and afterwards a change is served and a finding is
// reported.
func TestAPIServerRestart(t *testing.T) {
	s := newSite(t)
	waitLog(t, s.r, "became the leader")

	l := startLoad(s.client, s.url, "web")
	t.Cleanup(func() { _ = cluster.Start() }) // for the next tests, should this one fail
	cluster.Stop()
	l.waitFor(t, 100, "while the API server is down")
	waitLog(t, s.r, "no longer the leader") // the Lease could not be renewed
	if a, err := get(t.Context(), http.DefaultClient, "http://"+s.r.Controller+"/readyz"); err != nil || a.status != http.StatusOK {
		t.Errorf("/readyz while the API server is down: %v %v; want 200 (ramjetd serves)", a, err)
	}
	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	l.waitFor(t, 50, "after the API server came back")
	l.finish(t)

	// The informers' watches retry with client-go's backoff, which grew
	// during the outage (800 ms doubling, capped at 30 s, each with up to
	// as much again of jitter): after an outage of under 25 s the next
	// attempt comes within some 26 s (about 24 s after the 15 s here).
	s.setBackend("web", "next")
	expectWithin(t, 60*time.Second, s.client, s.url, "next")
	s.create(s.ingress("orphan", s.host("orphan"), "missing", nil))
	s.waitEvent("orphan", "ServiceNotFound")
}

// TestControllerRestart: the controller is killed (SIGKILL, as a crash)
// while traffic flows: ramjetd serves on, a change made meanwhile is
// published once the controller is back, no request fails, and a change
// made afterwards is served.
func TestControllerRestart(t *testing.T) {
	s := newSite(t)
	l := startLoad(s.client, s.url, "web", "next")
	s.r.KillController()
	s.setBackend("web", "next")
	l.waitFor(t, 50, "while the controller is dead")
	if err := check(t.Context(), s.client, s.url, "web"); err != nil {
		t.Errorf("while the controller is dead: %v", err)
	}
	if err := s.r.StartController(); err != nil {
		t.Fatal(err)
	}
	expect(t, s.client, s.url, "next")
	l.waitFor(t, 50, "after the controller restarted")
	l.finish(t)

	s.create(s.ingress("later", s.host("later"), "web", nil))
	expect(t, s.client, "http://"+s.host("later")+"/", "web")
}
