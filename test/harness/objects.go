package harness

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by label of the
// EndpointSlices EndpointSlice makes.
const ManagedBy = "harness.ramjet.dev"

// Service returns a ClusterIP Service ns/name with one unnamed TCP port
// that forwards to targetPort (the API server allocates its cluster IP).
func Service(ns, name string, port, targetPort int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{
				Protocol:   corev1.ProtocolTCP,
				Port:       port,
				TargetPort: intstr.FromInt32(targetPort),
			}},
		},
	}
}

// EndpointSlice returns the EndpointSlice ns/service (named like the
// Service, so a test updates it to scale) of the Service's unnamed port:
// port is the backends' port and every address is a ready endpoint. The
// address type is IPv6 when the first address is one, IPv4 otherwise.
// Change Ports[0].Name for a named Service port.
func EndpointSlice(ns, service string, port int32, addrs ...string) *discoveryv1.EndpointSlice {
	typ := discoveryv1.AddressTypeIPv4
	if len(addrs) > 0 {
		if a, err := netip.ParseAddr(addrs[0]); err == nil && a.Is6() && !a.Is4In6() {
			typ = discoveryv1.AddressTypeIPv6
		}
	}
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      service,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: service,
				discoveryv1.LabelManagedBy:   ManagedBy,
			},
		},
		AddressType: typ,
		Ports:       []discoveryv1.EndpointPort{{Name: new(""), Protocol: new(corev1.ProtocolTCP), Port: &port}},
		Endpoints:   []discoveryv1.Endpoint{},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{a},
			Conditions: discoveryv1.EndpointConditions{Ready: new(true), Serving: new(true), Terminating: new(false)},
		})
	}
	return s
}

// Namespace returns the Namespace name.
func Namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
