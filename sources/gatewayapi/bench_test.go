package gatewayapi_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// BenchmarkCompute computes snapshots of 10 Gateways with 100 and 1000
// routes each (one Service with one endpoint per route).
func BenchmarkCompute(b *testing.B) {
	for _, routes := range []int{100, 1000} {
		snap := benchSnapshot(10, routes)
		b.Run(fmt.Sprintf("gateways=10/routes=%d", routes), func(b *testing.B) {
			for b.Loop() {
				gatewayapi.Compute(snap, gatewayapi.Options{})
			}
		})
	}
}

func benchSnapshot(gateways, routes int) *snapshot.Snapshot {
	snap := snapshot.New()
	snap.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayapi.DefaultControllerName}})
	port, ready := int32(8080), true
	for g := range gateways {
		ns := fmt.Sprintf("ns-%d", g)
		snap.Add(&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"},
			Spec:       gatewayv1.GatewaySpec{GatewayClassName: "ramjet", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
		})
		for r := range routes {
			name := fmt.Sprintf("r-%d", r)
			path, p := fmt.Sprintf("/%d", r), gatewayv1.PortNumber(80)
			snap.Add(&gatewayv1.HTTPRoute{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: gatewayv1.HTTPRouteSpec{
					CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
					Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", r%10))},
					Rules: []gatewayv1.HTTPRouteRule{{
						Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: &path}}},
						BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: &p}}}},
					}},
				},
			})
			snap.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
			snap.Add(&discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Port: &port}},
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", g, r/256, r%256)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
			})
		}
	}
	snap.Sort()
	return snap
}
