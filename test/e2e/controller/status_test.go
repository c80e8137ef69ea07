package controller

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// statusOf returns the addresses in an Ingress's status.loadBalancer.
func statusOf(ing *networkingv1.Ingress) []string {
	var out []string
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		out = append(out, lb.IP+lb.Hostname)
	}
	return out
}

// waitStatus waits until the Ingress name's status holds exactly want.
func (e *env) waitStatus(name string, want ...string) {
	e.t.Helper()
	eventually(e.t, wait, fmt.Sprintf("the status of Ingress %s is %v", name, want), func() error {
		ing, err := cluster.Client.NetworkingV1().Ingresses(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := statusOf(ing); !slices.Equal(got, want) {
			return fmt.Errorf("status %v", got)
		}
		return nil
	})
}

// TestStatusAddress: with --publish-address the served Ingresses get the
// address in status.loadBalancer; a refused one, and one of another class,
// get none. A second replica against the same cluster (another address,
// so that its writes would show) does not write while the first holds the
// Lease, through several rebuilds on both; when the first stops, the
// second takes the Lease and writes its address.
func TestStatusAddress(t *testing.T) {
	s := newSite(t, "--publish-address=198.18.255.1")
	e, first := s.env, s.r
	foreign := e.ingress("foreign", e.host("foreign"), "web", nil)
	foreign.Spec.IngressClassName = new("nginx")
	e.create(foreign)
	e.create(e.ingress("auth", e.host("auth"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/configuration-snippet": "deny all;",
	}))
	e.waitStatus("web", "198.18.255.1")

	// Every status the Ingresses take from now on.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	list, err := cluster.Client.NetworkingV1().Ingresses(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cluster.Client.NetworkingV1().Ingresses(e.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	var written []string // read once done is closed
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ing, ok := ev.Object.(*networkingv1.Ingress); ok && ev.Type == watch.Modified {
				written = append(written, fmt.Sprintf("%s: %v", ing.Name, statusOf(ing)))
			}
		}
	}()

	second := e.startRamjet("--publish-address=198.18.255.2")
	// Three changes, each served by both replicas: once the third is
	// served, the reports of the first two (which saw foreign and auth)
	// are done on both.
	for _, backend := range []string{"next", "web", "next"} {
		e.setBackend("web", backend)
		expect(t, first.Client(nil), s.url, backend)
		expect(t, second.Client(nil), s.url, backend)
	}
	w.Stop()
	<-done
	for _, state := range written {
		if state != "web: [198.18.255.1]" && state != "auth: []" && state != "foreign: []" {
			t.Errorf("a status was written while the first replica led: %s (all: %v)", state, written)
			break
		}
	}
	e.waitStatus("web", "198.18.255.1")
	e.waitStatus("auth")
	e.waitStatus("foreign")

	// The leader stops and releases the Lease: the second replica leads
	// and writes its address.
	first.StopController()
	e.waitStatus("web", "198.18.255.2")
	e.waitStatus("auth")
}

// TestReadinessWaitsForRamjetd: a controller whose ramjetd is not there
// answers 503 on /readyz (it is alive: /healthz 200) and retries; once
// ramjetd runs, the configuration is loaded and /readyz answers 200.
func TestReadinessWaitsForRamjetd(t *testing.T) {
	s := newSite(t, "--retry=300ms")
	r := s.r
	r.StopController()
	r.StopRamjetd()

	started := make(chan error, 1)
	go func() { started <- r.StartController() }()
	notReady(t, r)
	eventually(t, wait, "the controller tried to publish", func() error {
		n, err := metric(t.Context(), r, `ramjet_ingress_syncs_total{result="error"}`)
		if err == nil && n < 1 {
			err = fmt.Errorf("%v failed synchronisations", n)
		}
		return err
	})
	notReady(t, r)
	select {
	case err := <-started:
		t.Fatalf("the controller became ready (%v) without ramjetd", err)
	default:
	}

	if err := r.StartRamjetd(); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	ready(t, r)
	expect(t, s.client, s.url, "web")
}

// TestReadinessWaitsForAPIServer: a controller started while the API
// server is down answers 503 on /readyz until its caches synced and its
// first configuration is loaded, then 200.
func TestReadinessWaitsForAPIServer(t *testing.T) {
	s := newSite(t)
	r := s.r
	r.StopController()
	s.setBackend("web", "next") // seen only by the next controller
	t.Cleanup(func() { _ = cluster.Start() })
	cluster.Stop()

	started := make(chan error, 1)
	go func() { started <- r.StartController() }()
	notReady(t, r)
	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	ready(t, r)
	expect(t, s.client, s.url, "next")
}

// notReady waits until the controller answers and checks that /readyz is
// 503 while /healthz is 200.
func notReady(t *testing.T, r *harness.Ramjet) {
	t.Helper()
	eventually(t, wait, "the controller answers /healthz", func() error {
		a, err := get(t.Context(), http.DefaultClient, "http://"+r.Controller+"/healthz")
		if err == nil && a.status != http.StatusOK {
			err = fmt.Errorf("/healthz: %s", a)
		}
		return err
	})
	a, err := get(t.Context(), http.DefaultClient, "http://"+r.Controller+"/readyz")
	if err != nil || a.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the first configuration: %v %v; want 503", a, err)
	}
}

// ready checks that /readyz answers 200.
func ready(t *testing.T, r *harness.Ramjet) {
	t.Helper()
	a, err := get(t.Context(), http.DefaultClient, "http://"+r.Controller+"/readyz")
	if err != nil || a.status != http.StatusOK {
		t.Errorf("/readyz after the first configuration: %v %v; want 200", a, err)
	}
}
