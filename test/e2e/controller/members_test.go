package controller

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	return servicePoolMembers(ctx, r, ns, "web", want...)
}

// servicePoolMembers returns nil when ramjetd's pool of port 80 of the
// Service service of ns has exactly the members want (host:port).
func servicePoolMembers(ctx context.Context, r *harness.Ramjet, ns, service string, want ...string) error {
	name := core.PoolName(ns, service, "80", core.PoolSettings{})
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

// refusedCandidates are addresses the address rule refuses
// (config.CheckMemberIP). The API server (v1.37) refuses the loopback,
// link-local, unspecified (0.0.0.0, ::) and IPv4-mapped ones itself, and
// accepts the rest of 0.0.0.0/8, multicast outside the link-local ranges
// and the broadcast address; an older one accepts more. A test uses those
// its API server accepts.
var refusedCandidates = []string{
	"127.0.0.1", "169.254.169.254", "0.0.0.0", "0.1.2.3", "224.1.1.1", "255.255.255.255",
	"::1", "fe80::1", "::", "::ffff:127.0.0.1", "ff05::1",
}

// acceptedRefused returns the refusedCandidates the API server accepts as
// endpoints, IPv4 and IPv6 apart (a dry run: nothing is stored).
func (e *env) acceptedRefused() (v4, v6 []string) {
	e.t.Helper()
	for _, addr := range refusedCandidates {
		probe := harness.EndpointSlice(e.ns, "probe", harness.BackendPort, addr)
		_, err := cluster.Client.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		e.t.Logf("the API server's answer to an endpoint %s: %v", addr, err)
		switch {
		case err != nil:
		case probe.AddressType == discoveryv1.AddressTypeIPv6:
			v6 = append(v6, addr)
		default:
			v4 = append(v4, addr)
		}
	}
	if len(v4) == 0 || len(v6) == 0 {
		e.t.Fatalf("the API server accepts no refused IPv4 or IPv6 endpoint address (%v, %v): the test would prove nothing", v4, v6)
	}
	return v4, v6
}

// TestRefusedEndpointAddresses: endpoints at addresses the address rule
// refuses never become members, over both channels. A member-only change
// (the member channel, no reload) adds them beside a good endpoint: the
// pool keeps the good one, which serves, and the Ingress gets an
// AddressRefused Event naming the Service and the addresses. A new Ingress
// (the structure channel, whose ramjet.yaml seeds the new pool) for a
// Service with such endpoints gets the same.
func TestRefusedEndpointAddresses(t *testing.T) {
	e := newEnv(t)
	v4, v6 := e.acceptedRefused()
	a, b := e.backend("a"), e.backend("b")
	e.service("web", a)
	r := e.startRamjet()
	client := r.Client(nil)
	url := "http://" + e.host("web") + "/"
	e.create(e.ingress("web", e.host("web"), "web", nil))
	expect(t, client, url, "a")
	gen := mustGeneration(t, r)

	slices := cluster.Client.DiscoveryV1().EndpointSlices(e.ns)
	current, err := slices.Get(e.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.Endpoints = harness.EndpointSlice(e.ns, "web", harness.BackendPort, append([]string{a.IP}, v4...)...).Endpoints
	if _, err := slices.Update(e.ctx, current, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ipv6 := harness.EndpointSlice(e.ns, "web", harness.BackendPort, v6...)
	ipv6.Name = "web-ipv6"
	if _, err := slices.Create(e.ctx, ipv6, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := e.waitEvent("web", "AddressRefused")
	for _, want := range append([]string{"Service " + e.ns + "/web", "1 other member serves"}, append(v4, v6...)...) {
		if !strings.Contains(ev.Note, want) {
			t.Errorf("the AddressRefused Event says %q; want it to hold %q", ev.Note, want)
		}
	}
	if err := poolMembers(t.Context(), r, e.ns, a.Addr); err != nil {
		t.Error(err)
	}
	for range 20 {
		if err := check(t.Context(), client, url, "a"); err != nil {
			t.Fatalf("beside refused endpoints: %v", err)
		}
	}
	if now := mustGeneration(t, r); now != gen {
		t.Errorf("ramjetd's generation went from %d to %d: an endpoint change reloaded it", gen, now)
	}

	// The structure channel: a new pool, seeded in ramjet.yaml.
	if _, err := cluster.Client.CoreV1().Services(e.ns).Create(e.ctx, harness.Service(e.ns, "next", 80, harness.BackendPort), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := slices.Create(e.ctx, harness.EndpointSlice(e.ns, "next", harness.BackendPort, append([]string{b.IP}, v4...)...), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.create(e.ingress("next", e.host("next"), "next", nil))
	expect(t, client, "http://"+e.host("next")+"/", "b")
	if ev := e.waitEvent("next", "AddressRefused"); !strings.Contains(ev.Note, "Service "+e.ns+"/next") || !strings.Contains(ev.Note, v4[0]) {
		t.Errorf("the AddressRefused Event of next says %q; want it to name the Service and %s", ev.Note, v4[0])
	}
	if err := servicePoolMembers(t.Context(), r, e.ns, "next", b.Addr); err != nil {
		t.Error(err)
	}
}
