package controller

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestStatusReport: the status is written with a merge patch of the status
// subresource only once the configuration is published, only on served
// Ingresses, not again while the snapshot still shows the version it was
// written over, and again after a failed write.
func TestStatusReport(t *testing.T) {
	served := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "7"}}
	rejected := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bad", ResourceVersion: "8"}}
	client := fake.NewClientset(served.DeepCopy(), rejected.DeepCopy())
	failNext := false
	client.PrependReactor("patch", "ingresses", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failNext {
			failNext = false
			return true, nil, errors.New("the API server is busy")
		}
		return false, nil, nil
	})
	target, err := ParsePublish("", "203.0.113.7")
	if err != nil {
		t.Fatal(err)
	}
	status := NewStatus(client, target, slog.New(slog.NewTextHandler(io.Discard, nil)))
	snap := snapshot.New()
	snap.Add(served)
	snap.Add(rejected)
	out := &sources.Output{Result: &core.Result{Objects: map[core.Origin]core.State{
		ingress.OriginOf(served): core.Served, ingress.OriginOf(rejected): core.Rejected}}}
	patches := func() int {
		n := 0
		for _, a := range client.Actions() {
			if p, ok := a.(k8stesting.PatchAction); ok {
				if p.GetSubresource() != "status" {
					t.Errorf("patched %q, want the status subresource", p.GetSubresource())
				}
				n++
			}
		}
		return n
	}
	ctx := context.Background()

	status.Report(ctx, Outcome{Snapshot: snap, Output: out, Published: false})
	if n := patches(); n != 0 {
		t.Fatalf("%d writes for an unpublished configuration, want 0", n)
	}
	failNext = true
	status.Report(ctx, Outcome{Snapshot: snap, Output: out, Published: true})
	if n := patches(); n != 1 {
		t.Fatalf("%d writes, want 1 (the served Ingress, failing)", n)
	}
	status.Report(ctx, Outcome{Snapshot: snap, Output: out, Published: true})
	if n := patches(); n != 2 {
		t.Fatalf("%d writes, want 2: a failed write is tried again", n)
	}
	got, err := client.NetworkingV1().Ingresses("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lb := got.Status.LoadBalancer.Ingress; len(lb) != 1 || lb[0].IP != "203.0.113.7" {
		t.Errorf("status %v, want 203.0.113.7", lb)
	}
	status.Report(ctx, Outcome{Snapshot: snap, Output: out, Published: true})
	if n := patches(); n != 2 {
		t.Errorf("%d writes, want still 2: the snapshot shows the version already written over", n)
	}
	updated := served.DeepCopy()
	updated.ResourceVersion = "9" // someone else wrote another status
	updated.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
	snap = snapshot.New()
	snap.Add(updated)
	snap.Add(rejected)
	status.Report(ctx, Outcome{Snapshot: snap, Output: out, Published: true})
	if n := patches(); n != 3 {
		t.Errorf("%d writes, want 3: a status changed by someone else is written again", n)
	}
}
