package controller

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// TestScaleEndpoints: endpoints added to a Service's EndpointSlice get
// traffic, endpoints removed get none, a Service without endpoints answers
// 503 until one comes back, and no change reloads ramjetd (its generation
// stays): members go over the member channel.
func TestScaleEndpoints(t *testing.T) {
	e := newEnv(t)
	hits := map[string]*atomic.Int64{}
	counting := func(name string) *harness.Backend {
		n := new(atomic.Int64)
		hits[name] = n
		return e.network.Backend(t, name, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			n.Add(1)
			w.Header().Set("X-Backend", name)
			fmt.Fprintln(w, name)
		}))
	}
	a, b, c := counting("a"), counting("b"), counting("c")
	e.service("web", a)
	r := e.startRamjet()
	client := r.Client(nil)
	url := "http://" + e.host("web") + "/"
	e.create(e.ingress("web", e.host("web"), "web", nil))
	expect(t, client, url, "a")
	gen := mustGeneration(t, r)

	// Scale up: b and c join and get requests.
	e.scale("web", a, b, c)
	seen := map[string]bool{}
	eventually(t, wait, "every endpoint answers", func() error {
		ans, err := get(t.Context(), client, url)
		if err != nil || ans.status != http.StatusOK {
			return fmt.Errorf("%v %v", ans, err)
		}
		seen[ans.backend] = true
		if len(seen) < 3 {
			return fmt.Errorf("answered by %v so far", seen)
		}
		return nil
	})

	// Scale down to b: once ramjetd's pool holds only b, a and c get no
	// more requests.
	e.scale("web", b)
	eventually(t, wait, "the pool holds b only", func() error { return poolMembers(t.Context(), r, e.ns, b.Addr) })
	before := hits["a"].Load() + hits["c"].Load()
	for range 50 {
		if err := check(t.Context(), client, url, "b"); err != nil {
			t.Fatalf("after scaling down to b: %v", err)
		}
	}
	if after := hits["a"].Load() + hits["c"].Load(); after != before {
		t.Errorf("removed endpoints got %d requests after leaving the pool", after-before)
	}

	// No endpoint left: 503; one back: served again.
	e.scale("web")
	eventually(t, wait, "GET "+url+" answered 503 without endpoints", func() error {
		ans, err := get(t.Context(), client, url)
		if err != nil || ans.status != http.StatusServiceUnavailable || ans.backend != "" {
			return fmt.Errorf("%v %v", ans, err)
		}
		return nil
	})
	e.scale("web", c)
	expect(t, client, url, "c")

	if now := mustGeneration(t, r); now != gen {
		t.Errorf("ramjetd's generation went from %d to %d: scaling reloaded it", gen, now)
	}
}

// poolMembers returns nil when ramjetd's pool of port 80 of the Service
// web of ns has exactly the members want (host:port).
func poolMembers(ctx context.Context, r *harness.Ramjet, ns string, want ...string) error {
	name := core.PoolName(ns, "web", "80", core.PoolSettings{})
	pool, err := admin.NewClient(r.AdminSocket).Pool(ctx, name)
	if err != nil {
		return fmt.Errorf("pool %s: %w", name, err)
	}
	var got []string
	for _, m := range pool.Members {
		got = append(got, m.Address)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("pool %s has members %v, want %v", name, got, want)
	}
	return nil
}

// TestRamjetdRestartGetsCurrentMembers: member-only changes never rewrite
// ramjet.yaml, so a ramjetd that restarts starts from older member seeds;
// the controller notices the restart within seconds (not at the next
// 30 s resync) and sends every pool again.
func TestRamjetdRestartGetsCurrentMembers(t *testing.T) {
	e := newEnv(t)
	a := e.network.Backend(t, "a", nil)
	b := e.network.Backend(t, "b", nil)
	e.service("web", a)
	r := e.startRamjet()
	e.create(e.ingress("web", e.host("web"), "web", nil))
	expect(t, r.Client(nil), "http://"+e.host("web")+"/", "a")

	e.scale("web", b) // a member-only change: the file still seeds a
	eventually(t, wait, "the pool holds b", func() error { return poolMembers(t.Context(), r, e.ns, b.Addr) })
	r.StopRamjetd()
	if err := r.StartRamjetd(); err != nil {
		t.Fatal(err)
	}
	// Well under the 30 s resync: the restart check runs every 2 s.
	eventually(t, 10*time.Second, "the restarted ramjetd holds b", func() error { return poolMembers(t.Context(), r, e.ns, b.Addr) })
}
