package gatewayapi

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Shared serves every Gateway on listeners of the base (the pod's own
// ports, --gateway-listener PORT=NAME), at the addresses of the pod's
// Service: all Gateways of the class share one address, so two Gateways
// cannot serve one hostname on one port (the older Gateway keeps it).
type Shared struct {
	// Ports maps a Gateway listener port to the base's listener that
	// serves it; other ports are not served.
	Ports map[gatewayv1.PortNumber]string
	// Service, when set, is the Service whose load-balancer addresses
	// every Gateway reports; else Fixed are.
	Service *snapshot.Key
	Fixed   []gatewayv1.GatewayStatusAddress
}

// Assign gives every Gateway of the snapshot the shared ports and
// addresses.
func (s *Shared) Assign(snap *snapshot.Snapshot) map[snapshot.Key]Assignment {
	addresses := s.Fixed
	if s.Service != nil {
		addresses = ServiceAddresses(snap.Services[*s.Service])
	}
	ports := make(map[gatewayv1.PortNumber]PortAssignment, len(s.Ports))
	for port, listener := range s.Ports {
		ports[port] = PortAssignment{Listener: listener}
	}
	out := make(map[snapshot.Key]Assignment, len(snap.Gateways))
	for _, gw := range snap.Gateways {
		out[gatewayKey(gw)] = Assignment{Addresses: addresses, Ports: ports}
	}
	return out
}

// ServiceAddresses are the addresses a Service is reached at, as a
// Gateway's status gives them, without duplicates: for a LoadBalancer
// Service the entries of its status.loadBalancer.ingress (none while the
// load balancer is pending), for another type its cluster IPs. Nil for a
// nil svc.
func ServiceAddresses(svc *corev1.Service) []gatewayv1.GatewayStatusAddress {
	if svc == nil {
		return nil
	}
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

// ParseListeners checks --gateway-listener values, each PORT=NAME: a port
// 1..65535 given once, and a listener of base.
func ParseListeners(values []string, base *config.Server) (map[gatewayv1.PortNumber]string, error) {
	out := make(map[gatewayv1.PortNumber]string, len(values))
	for _, v := range values {
		portText, name, ok := strings.Cut(v, "=")
		port, err := strconv.Atoi(portText)
		switch {
		case !ok || name == "":
			return nil, fmt.Errorf("--gateway-listener %q: want PORT=NAME, such as 80=http", v)
		case err != nil || port < 1 || port > 65535:
			return nil, fmt.Errorf("--gateway-listener %q: the port must be a number 1..65535", v)
		case out[gatewayv1.PortNumber(port)] != "":
			return nil, fmt.Errorf("--gateway-listener %q: port %d is given twice", v, port)
		case base.Listeners[name] == nil:
			return nil, fmt.Errorf("--gateway-listener %q: the base configuration has no listener %q", v, name)
		}
		out[gatewayv1.PortNumber(port)] = name
	}
	return out, nil
}
