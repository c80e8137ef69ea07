package controller

import (
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBadIngressLeavesOthersServed: an Ingress asking for access control
// Ramjet does not provide (an access directive in a configuration-snippet) and one with a path that is not a
// regular expression are not served (their hosts answer 404, fail closed)
// and each gets a Warning Event saying why; the good Ingress stays served
// and its later changes are still published.
func TestBadIngressLeavesOthersServed(t *testing.T) {
	s := newSite(t)
	e, r, client := s.env, s.r, s.client

	e.create(e.ingress("auth", e.host("auth"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/configuration-snippet": "deny all;",
	}))
	regex := e.ingress("regex", e.host("regex"), "web", map[string]string{"nginx.ingress.kubernetes.io/use-regex": "true"})
	regex.Spec.Rules[0].HTTP.Paths[0].Path = "/items/(["
	regex.Spec.Rules[0].HTTP.Paths[0].PathType = new(networkingv1.PathTypeImplementationSpecific)
	e.create(regex)

	auth := e.waitEvent("auth", "UnsupportedAccessControl")
	if !strings.Contains(auth.Note, "configuration-snippet") {
		t.Errorf("the configuration-snippet Event says %q; want it to name the annotation", auth.Note)
	}
	invalid := e.waitEvent("regex", "InvalidConfiguration")
	if !strings.Contains(invalid.Note, "regular expression") {
		t.Errorf("the regex Event says %q; want it to say the regular expression is invalid", invalid.Note)
	}
	for _, host := range []string{"auth", "regex"} {
		if err := check(t.Context(), client, "http://"+e.host(host)+"/items/1", ""); err != nil {
			t.Errorf("the host of the refused Ingress %s: %v", host, err)
		}
	}
	if err := check(t.Context(), client, s.url, "web"); err != nil {
		t.Errorf("the good Ingress after the bad ones: %v", err)
	}
	eventually(t, wait, "the controller counts 1 served and 2 rejected Ingresses", func() error {
		served, err := metric(t.Context(), r, `ramjet_ingress_ingresses{state="served"}`)
		if err != nil {
			return err
		}
		rejected, err := metric(t.Context(), r, `ramjet_ingress_ingresses{state="rejected"}`)
		if err != nil {
			return err
		}
		if served != 1 || rejected != 2 {
			return fmt.Errorf("served %v, rejected %v", served, rejected)
		}
		return nil
	})

	// The bad Ingresses do not hold back later changes.
	e.setBackend("web", "next")
	expect(t, client, s.url, "next")
}

// TestEvents: findings are Warning Events (events.k8s.io/v1) on their
// Ingress, from ramjet.dev/ingress, one per finding: later rebuilds (other
// objects changing) do not repeat them; an Ingress of another class gets
// none. A finding that goes away and comes back is reported again.
func TestEvents(t *testing.T) {
	s := newSite(t)
	e, client := s.env, s.client
	foreign := e.ingress("foreign", e.host("foreign"), "missing", map[string]string{
		"nginx.ingress.kubernetes.io/frobnicate": "yes",
	})
	foreign.Spec.IngressClassName = new("nginx")
	e.create(foreign) // before orphan: seen by the rebuild that reports orphan's findings
	e.create(e.ingress("orphan", e.host("orphan"), "missing", map[string]string{
		"nginx.ingress.kubernetes.io/frobnicate": "yes",
	}))
	notFound := e.waitEvent("orphan", "ServiceNotFound")
	if !strings.Contains(notFound.Note, "missing") || notFound.Action == "" {
		t.Errorf("ServiceNotFound Event: note %q, action %q; want the Service named and an action", notFound.Note, notFound.Action)
	}
	unknown := e.waitEvent("orphan", "UnknownAnnotation")
	if !strings.Contains(unknown.Note, "frobnicate") {
		t.Errorf("UnknownAnnotation Event: note %q; want the annotation named", unknown.Note)
	}

	// Rebuilds caused by another object: each waited for until served. A
	// rebuild reports after it published, so once the third change is
	// served the reports of the first two are done.
	for _, backend := range []string{"next", "web", "next"} {
		e.setBackend("web", backend)
		expect(t, client, s.url, backend)
	}
	list, err := e.events("orphan")
	if err != nil {
		t.Fatal(err)
	}
	count := occurrences(list)
	if count["ServiceNotFound"] != 1 || count["UnknownAnnotation"] != 1 || len(count) != 2 {
		t.Errorf("after three more rebuilds the Events of the orphan Ingress count %v; want ServiceNotFound and UnknownAnnotation once each", count)
	}
	for _, name := range []string{"web", "foreign"} {
		if list, err := e.events(name); err != nil || len(list) != 0 {
			t.Errorf("Events on Ingress %s (no findings, or another class): %d (%v)", name, len(list), err)
		}
	}

	// The Service appears: the finding goes away. It comes back when the
	// Service is deleted, and is reported again.
	e.service("missing", e.backend("missing"))
	expect(t, client, "http://"+e.host("orphan")+"/", "missing")
	if err := cluster.Client.CoreV1().Services(e.ns).Delete(t.Context(), "missing", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, "ServiceNotFound reported again", func() error {
		list, err := e.events("orphan")
		if err != nil {
			return err
		}
		if n := occurrences(list)["ServiceNotFound"]; n != 2 {
			return fmt.Errorf("%d ServiceNotFound Events", n)
		}
		return nil
	})
}

// occurrences counts, by reason, how many times Events were reported: an
// Event reported again within the recorder's window becomes a series on
// the same object.
func occurrences(list []eventsv1.Event) map[string]int {
	count := map[string]int{}
	for _, ev := range list {
		n := 1
		if ev.Series != nil {
			n = int(ev.Series.Count)
		}
		count[ev.Reason] += n
	}
	return count
}
