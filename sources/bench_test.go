package sources_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// benchSnapshot has ingresses Ingresses (one host, two paths each, a tenth
// with regex paths) over services Services of 3 ready endpoints, in 100
// namespaces.
func benchSnapshot(ingresses, services int) *snapshot.Snapshot {
	snap := snapshot.New()
	snap.Add(&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: networkingv1.IngressClassSpec{Controller: ingress.DefaultControllerClass}})
	class := "ramjet"
	prefix := networkingv1.PathTypePrefix
	ready := true
	port := int32(8080)
	for i := range services {
		ns := fmt.Sprintf("ns-%d", i%100)
		name := fmt.Sprintf("svc-%d", i)
		snap.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: new(string), Port: &port}},
		}
		for j := range 3 {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
				Addresses: []string{fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j+1)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			})
		}
		snap.Add(slice)
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range ingresses {
		svc := i % services
		ns := fmt.Sprintf("ns-%d", svc%100)
		backend := func(s int) networkingv1.IngressBackend {
			return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: fmt.Sprintf("svc-%d", s), Port: networkingv1.ServiceBackendPort{Number: 80}}}
		}
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("ing-%d", i), CreationTimestamp: metav1.NewTime(created.Add(time.Duration(i) * time.Second))},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: fmt.Sprintf("host-%d.example.com", i),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: "/", PathType: &prefix, Backend: backend(svc)},
					{Path: "/api", PathType: &prefix, Backend: backend((svc + 100) % services)},
				}}},
			}}},
		}
		ing.Annotations = benchAnnotations(i)
		if i%10 == 0 {
			ing.Spec.Rules[0].HTTP.Paths[1].Path = "/api(/|$)(.*)"
		}
		snap.Add(ing)
	}
	snap.Sort()
	return snap
}

// benchAnnotations is a mix of the annotations migrating clusters carry:
// every Ingress has a few, one in ten rewrites, one in five has CORS, one in
// twenty cookie affinity.
func benchAnnotations(i int) map[string]string {
	a := map[string]string{
		registry.Prefix + "proxy-body-size":    "8m",
		registry.Prefix + "proxy-read-timeout": "120",
		registry.Prefix + "ssl-redirect":       "false",
	}
	if i%10 == 0 {
		a[registry.Prefix+"rewrite-target"] = "/$2"
	}
	if i%5 == 0 {
		a[registry.Prefix+"enable-cors"] = "true"
		a[registry.Prefix+"cors-allow-origin"] = "https://app.example.com, https://*.example.org"
	}
	if i%20 == 0 {
		a[registry.Prefix+"affinity"] = "cookie"
		a[registry.Prefix+"session-cookie-max-age"] = "3600"
	}
	return a
}

// BenchmarkTranslate translates 10,000 Ingresses over 2,000 Services (and
// smaller sizes, to show the growth): the whole pipeline, from the snapshot
// to a validated configuration.
func BenchmarkTranslate(b *testing.B) {
	for _, size := range []struct{ ingresses, services int }{{1000, 200}, {10000, 2000}} {
		b.Run(fmt.Sprintf("ingresses=%d,services=%d", size.ingresses, size.services), func(b *testing.B) {
			snap := benchSnapshot(size.ingresses, size.services)
			base := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}}
			opts := sources.Options{Inputs: []input.Input{&ingress.Input{Options: ingress.Options{
				IngressClass: ingress.DefaultIngressClass, ControllerClass: ingress.DefaultControllerClass, Annotations: registry.All(),
			}}}}
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			for b.Loop() {
				out := sources.Translate(snap, base, opts)
				if n := len(out.Config.Tenants["ingress"].Applications); n != size.ingresses {
					b.Fatalf("%d applications, want %d", n, size.ingresses)
				}
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapInuse)/(1<<20), "MiB-heap-in-use")
		})
	}
}
