package gatewayservice

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Assignment is what a Gateway's Service says about the Gateway.
type Assignment struct {
	// Ports maps a Gateway port to the pod port that serves it.
	Ports map[int32]int32
	// Addresses are where the Gateway is reachable: the entries of a
	// LoadBalancer Service's status.loadBalancer.ingress (none while the
	// load balancer is pending), another type's cluster IPs.
	Addresses []gatewayv1.GatewayStatusAddress
}

// Assignments reads the Gateways' assignments from services, of which it
// reads only this controller's (any other Service is skipped).
func Assignments(services []*corev1.Service, opts Options) map[snapshot.Key]Assignment {
	opts = opts.withDefaults()
	out := map[snapshot.Key]Assignment{}
	for _, svc := range services {
		key, ok := gatewayOf(svc)
		if !ok || !opts.owns(svc) {
			continue
		}
		a := Assignment{Ports: map[int32]int32{}, Addresses: addresses(svc)}
		for _, p := range svc.Spec.Ports {
			if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal >= 1 && p.TargetPort.IntVal <= 65535 {
				a.Ports[p.Port] = p.TargetPort.IntVal
			}
		}
		out[key] = a
	}
	return out
}

// addresses are the addresses of svc, without duplicates.
func addresses(svc *corev1.Service) []gatewayv1.GatewayStatusAddress {
	var out []gatewayv1.GatewayStatusAddress
	seen := map[string]bool{}
	add := func(t gatewayv1.AddressType, v string) {
		if v == "" || v == corev1.ClusterIPNone || seen[v] {
			return
		}
		seen[v] = true
		out = append(out, gatewayv1.GatewayStatusAddress{Type: &t, Value: v})
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			add(gatewayv1.IPAddressType, in.IP)
			add(gatewayv1.HostnameAddressType, in.Hostname)
		}
		return out
	}
	add(gatewayv1.IPAddressType, svc.Spec.ClusterIP)
	for _, c := range svc.Spec.ClusterIPs {
		add(gatewayv1.IPAddressType, c)
	}
	return out
}
