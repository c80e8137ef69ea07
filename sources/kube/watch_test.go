package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	metafake "k8s.io/client-go/metadata/fake"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

func TestSnapshotScope(t *testing.T) {
	e := newFakeEnv(t, Options{Namespace: "a"})
	create := func(obj runtime.Object) {
		t.Helper()
		var err error
		switch o := obj.(type) {
		case *networkingv1.IngressClass:
			_, err = e.client.NetworkingV1().IngressClasses().Create(e.ctx, o, metav1.CreateOptions{})
		case *networkingv1.Ingress:
			_, err = e.client.NetworkingV1().Ingresses(o.Namespace).Create(e.ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			_, err = e.client.CoreV1().Services(o.Namespace).Create(e.ctx, o, metav1.CreateOptions{})
		case *discoveryv1.EndpointSlice:
			_, err = e.client.DiscoveryV1().EndpointSlices(o.Namespace).Create(e.ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	meta := func(ns, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}}
	}
	slice := func(ns, name, svc string) *discoveryv1.EndpointSlice {
		m := meta(ns, name)
		m.Labels = map[string]string{discoveryv1.LabelServiceName: svc}
		return &discoveryv1.EndpointSlice{ObjectMeta: m, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"198.18.0.1"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "p"}}}}
	}
	create(&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "traefik"}})
	for _, ns := range []string{"a", "b"} {
		create(&networkingv1.Ingress{ObjectMeta: meta(ns, "z")})
		create(&networkingv1.Ingress{ObjectMeta: meta(ns, "y")})
		create(&corev1.Service{ObjectMeta: meta(ns, "svc")})
		create(slice(ns, "svc-2", "svc"))
		create(slice(ns, "svc-1", "svc"))
		create(slice(ns, "orphan", ""))
	}
	var snap *snapshot.Snapshot
	e.eventually("every object of namespace a", func() bool {
		snap, _ = e.w.Snapshot(e.ctx)
		return len(snap.IngressClasses) == 3 && len(snap.Ingresses) == 2 && len(snap.Services) == 1 && len(snap.EndpointSlices[snapshot.Key{Namespace: "a", Name: "svc"}]) == 2
	})
	if names := []string{snap.Ingresses[0].Name, snap.Ingresses[1].Name}; !slices.Equal(names, []string{"y", "z"}) {
		t.Errorf("Ingresses %q, want sorted [y z]", names)
	}
	for k := range snap.Services {
		if k.Namespace != "a" {
			t.Errorf("Service %s of another namespace", k)
		}
	}
	if len(snap.EndpointSlices) != 1 {
		t.Errorf("EndpointSlices of %d Services, want 1", len(snap.EndpointSlices))
	}
	slices_ := snap.EndpointSlices[snapshot.Key{Namespace: "a", Name: "svc"}]
	if slices_[0].Name != "svc-1" {
		t.Errorf("EndpointSlices not sorted: %s first", slices_[0].Name)
	}
	if ep := slices_[0].Endpoints[0]; ep.TargetRef != nil || ep.Addresses[0] != "198.18.0.1" {
		t.Errorf("endpoint %+v, want its address without targetRef", ep)
	}
	if ing := snap.Ingresses[0]; ing.ManagedFields != nil || ing.Annotations[corev1.LastAppliedConfigAnnotation] == "" {
		t.Errorf("Ingress kept managedFields or lost its annotations: %+v", ing.ObjectMeta)
	}
	if svc := snap.Services[snapshot.Key{Namespace: "a", Name: "svc"}]; svc.ManagedFields != nil || len(svc.Annotations) != 0 {
		t.Errorf("Service kept managedFields or last-applied-configuration: %+v", svc.ObjectMeta)
	}
}

func TestWaitForSyncNamesWhatDidNotSync(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	w, err := NewWatch(Clients{Kube: fake.NewClientset(), Metadata: metafake.NewSimpleMetadataClient(scheme)},
		withIngressInput(Options{Namespace: "a", ExtraSecrets: []snapshot.Key{{Namespace: "system", Name: "cert"}}}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = w.WaitForSync(ctx) // never started
	if err == nil {
		t.Fatal("WaitForSync succeeded without informers running")
	}
	for _, want := range []string{"IngressClasses", "Ingresses in namespace a", "Services in namespace a", "EndpointSlices in namespace a",
		"Secrets (metadata) in namespace a", "Secret system/cert (metadata)", "context deadline exceeded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestUpdateFilters(t *testing.T) {
	ing := func(rv, class, annotation, status string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv, Annotations: map[string]string{"a": annotation}}}
		i.Spec.IngressClassName = &class
		if status != "" {
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: status}}
		}
		return i
	}
	svc := func(rv string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	for _, tc := range []struct {
		name     string
		update   func(old, new any) bool
		old, new any
		want     bool
	}{
		{"relist of an unchanged object", changedUpdate, svc("1"), svc("1"), false},
		{"changed object", changedUpdate, svc("1"), svc("2"), true},
		{"Ingress status only", ingressUpdate, ing("1", "c", "v", ""), ing("2", "c", "v", "198.18.0.9"), false},
		{"Ingress spec", ingressUpdate, ing("1", "c", "v", ""), ing("2", "d", "v", ""), true},
		{"Ingress annotation", ingressUpdate, ing("1", "c", "v", ""), ing("2", "c", "w", ""), true},
		{"Ingress relist", ingressUpdate, ing("1", "c", "v", ""), ing("1", "c", "v", ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.update(tc.old, tc.new); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChangedNeverBlocks(t *testing.T) {
	w := &Watch{changed: make(chan struct{}, 1)}
	for range 3 {
		w.signal()
	}
	<-w.Changed()
	select {
	case <-w.Changed():
		t.Error("signals were not coalesced into one")
	default:
	}
}

// BenchmarkSnapshot measures a rebuild's snapshot of 5,000 Ingresses, each
// with its Service, EndpointSlice and cached TLS Secret (no reads).
func BenchmarkSnapshot(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	w, err := NewWatch(Clients{Kube: fake.NewClientset(), Metadata: metafake.NewSimpleMetadataClient(scheme)}, withIngressInput(Options{}))
	if err != nil {
		b.Fatal(err)
	}
	informers := w.all() // Services, EndpointSlices, IngressClasses, Ingresses, Secrets
	add := func(inf namedInformer, obj any) {
		if err := inf.informer.GetIndexer().Add(obj); err != nil {
			b.Fatal(err)
		}
	}
	add(informers[2], &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"},
		Spec: networkingv1.IngressClassSpec{Controller: ingress.DefaultControllerClass}})
	for i := range 5000 {
		ns, name := fmt.Sprintf("ns%d", i%100), fmt.Sprintf("app%d", i)
		add(informers[3], tlsIngress(ns, name, name+"-tls"))
		add(informers[0], &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		slice := endpointSlice(ns, name)
		add(informers[1], slice)
		meta := metav1.ObjectMeta{Namespace: ns, Name: name + "-tls", ResourceVersion: "7"}
		add(informers[4], &metav1.PartialObjectMetadata{ObjectMeta: meta})
		w.secrets.data[snapshot.Key{Namespace: ns, Name: name + "-tls"}] = &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeTLS}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		snap, err := w.Snapshot(ctx)
		if err != nil || len(snap.Secrets) != 5000 {
			b.Fatalf("%d Secrets, error %v", len(snap.Secrets), err)
		}
	}
}

func endpointSlice(ns, svc string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"198.18.0.1"}}}}
}

// withIngressInput gives opts the kinds and references of the Ingress
// input with the default classes.
func withIngressInput(opts Options) Options {
	in := &ingress.Input{Options: ingress.Options{IngressClass: ingress.DefaultIngressClass, ControllerClass: ingress.DefaultControllerClass}}
	opts.Kinds = in.Kinds()
	opts.References = in.References
	return opts
}

// TestInformersOfInputs checks that a Watch builds informers for the kinds
// of the enabled inputs only: a Gateway-only install watches no Ingress or
// IngressClass, an Ingress-only one no Gateway API kind.
func TestInformersOfInputs(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	gatewayKinds := []snapshot.Kind{snapshot.GatewayClasses, snapshot.Gateways, snapshot.HTTPRoutes, snapshot.GRPCRoutes,
		snapshot.ReferenceGrants, snapshot.BackendTLSPolicies, snapshot.Namespaces}
	refs := []string{"Secrets (metadata) in all namespaces", "ConfigMaps (metadata) in all namespaces"}
	for _, tc := range []struct {
		name  string
		kinds []snapshot.Kind
		want  []string
	}{
		{"ingress", []snapshot.Kind{snapshot.IngressClasses, snapshot.Ingresses},
			append([]string{"Services in all namespaces", "EndpointSlices in all namespaces", "IngressClasses", "Ingresses in all namespaces"}, refs...)},
		{"gateway-api", gatewayKinds,
			append([]string{"Services in all namespaces", "EndpointSlices in all namespaces", "GatewayClasses", "Gateways in all namespaces",
				"HTTPRoutes in all namespaces", "GRPCRoutes in all namespaces", "ReferenceGrants in all namespaces",
				"BackendTLSPolicies in all namespaces", "Namespaces"}, refs...)},
		{"both, Namespaces named twice", append([]snapshot.Kind{snapshot.IngressClasses, snapshot.Ingresses, snapshot.Namespaces}, gatewayKinds...),
			append([]string{"Services in all namespaces", "EndpointSlices in all namespaces", "IngressClasses", "Ingresses in all namespaces",
				"Namespaces", "GatewayClasses", "Gateways in all namespaces", "HTTPRoutes in all namespaces", "GRPCRoutes in all namespaces",
				"ReferenceGrants in all namespaces", "BackendTLSPolicies in all namespaces"}, refs...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWatch(Clients{Kube: fake.NewClientset(), Metadata: metafake.NewSimpleMetadataClient(scheme),
				Gateway: gatewayfake.NewSimpleClientset()}, Options{Kinds: tc.kinds})
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Informers(); !slices.Equal(got, tc.want) {
				t.Errorf("informers\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
	if _, err := NewWatch(Clients{Kube: fake.NewClientset(), Metadata: metafake.NewSimpleMetadataClient(scheme)},
		Options{Kinds: gatewayKinds}); err == nil {
		t.Error("a Gateway API watch without a Gateway API client was accepted")
	}
	if _, err := NewWatch(Clients{Kube: fake.NewClientset(), Metadata: metafake.NewSimpleMetadataClient(scheme)},
		Options{Kinds: []snapshot.Kind{"Widgets"}}); err == nil || !strings.Contains(err.Error(), `"Widgets"`) {
		t.Errorf("an unknown kind: error %v, want one naming it", err)
	}
}
