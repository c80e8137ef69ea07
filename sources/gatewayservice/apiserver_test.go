package gatewayservice

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// TestAgainstAPIServer applies plans to a real kube-apiserver: what it
// keeps plans to nothing again, the assignments read back match, a
// changed type and a deleted Gateway are applied, and a foreign Service is
// never touched.
func TestAgainstAPIServer(t *testing.T) {
	c := harness.StartAPIServer(t)
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, harness.Namespace("ramjet"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	services := c.Client.CoreV1().Services("ramjet")
	foreign := harness.Service("ramjet", "web", 80, 8080)
	if _, err := services.Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	list := func() []*corev1.Service {
		t.Helper()
		l, err := services.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []*corev1.Service
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out
	}
	sync := func(gateways ...*gatewayv1.Gateway) {
		t.Helper()
		plan := Desired(gateways, list(), opts)
		if err := (Provisioner{Options: opts}).Apply(ctx, c.Client, plan); err != nil {
			t.Fatalf("apply %q: %v", summary(plan, nil), err)
		}
		if again := Desired(gateways, list(), opts); !again.Empty() {
			t.Fatalf("after applying, planning again: got %q, want nothing", summary(again, list()))
		}
	}
	a, b := gateway("shop", "a", 80, 443), gateway("shop", "b", 80)
	sync(a, b)
	assigned := Assignments(list(), opts)
	if got, want := render(assigned[snapshot.Key{Namespace: "shop", Name: "a"}]), "80>20000 443>20001"; got != want {
		t.Errorf("shop/a: got %q, want %q", got, want)
	}
	if got, want := render(assigned[snapshot.Key{Namespace: "shop", Name: "b"}]), "80>20002"; got != want {
		t.Errorf("shop/b: got %q, want %q", got, want)
	}

	bName := ServiceName(snapshot.Key{Namespace: "shop", Name: "b"})
	svc, err := services.Get(ctx, bName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.18.0.10"}}
	if _, err := services.UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := render(Assignments(list(), opts)[snapshot.Key{Namespace: "shop", Name: "b"}]), "80>20002 IPAddress=198.18.0.10"; got != want {
		t.Errorf("shop/b with a load balancer: got %q, want %q", got, want)
	}

	sync(gateway("shop", "a", 443, 8443), b)
	opts.Type = corev1.ServiceTypeClusterIP
	sync(gateway("shop", "a", 443, 8443), b)
	got := Assignments(list(), opts)[snapshot.Key{Namespace: "shop", Name: "a"}]
	if got.Ports[443] != 20001 || got.Ports[8443] != 20003 || len(got.Ports) != 2 || len(got.Addresses) == 0 {
		t.Errorf("shop/a as ClusterIP: got %q, want 443>20001 8443>20003 and its cluster IP", render(got))
	}

	sync(gateway("shop", "a", 443, 8443))
	if _, err := services.Get(ctx, bName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Service of the deleted Gateway: got %v, want NotFound", err)
	}
	err = (Provisioner{Options: opts}).Apply(ctx, c.Client, Plan{Delete: []snapshot.Key{{Namespace: "ramjet", Name: "web"}}})
	if err == nil {
		t.Error("deleting a foreign Service: got no error")
	}
	if !slices.ContainsFunc(list(), func(s *corev1.Service) bool { return s.Name == "web" }) {
		t.Error("the foreign Service is gone")
	}
}
