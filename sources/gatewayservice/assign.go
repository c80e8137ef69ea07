package gatewayservice

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
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
		a := Assignment{Ports: map[int32]int32{}, Addresses: gatewayapi.ServiceAddresses(svc)}
		for _, p := range svc.Spec.Ports {
			if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal >= 1 && p.TargetPort.IntVal <= 65535 {
				a.Ports[p.Port] = p.TargetPort.IntVal
			}
		}
		out[key] = a
	}
	return out
}

// Addressing is the Gateway API input's addressing in the own-address
// mode: each Gateway port is served on a data-plane listener of its own,
// on the pod port its Service gives.
type Addressing struct{ Options Options }

// Assign reads the Gateways' Services of the snapshot.
func (a *Addressing) Assign(snap *snapshot.Snapshot) map[snapshot.Key]gatewayapi.Assignment {
	var services []*corev1.Service
	for key, svc := range snap.Services {
		if key.Namespace == a.Options.Namespace {
			services = append(services, svc)
		}
	}
	out := map[snapshot.Key]gatewayapi.Assignment{}
	for key, as := range Assignments(services, a.Options) {
		ga := gatewayapi.Assignment{Addresses: as.Addresses, Ports: make(map[gatewayv1.PortNumber]gatewayapi.PortAssignment, len(as.Ports))}
		for port, podPort := range as.Ports {
			p := gatewayv1.PortNumber(port)
			ga.Ports[p] = gatewayapi.PortAssignment{Listener: gatewayapi.OwnListener(key, p), Address: ":" + strconv.Itoa(int(podPort))}
		}
		out[key] = ga
	}
	return out
}
