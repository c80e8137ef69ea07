package offline

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/gatewayservice"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// PlannedServices is the Gateway API input's own-address mode offline.
// The running controller serves a Gateway once the leader has created its
// Service and the Service is back in the snapshot; manifests seldom hold
// those Services, and without them no Gateway would be served at all. So
// each accepted Gateway gets the Service of the snapshot that is its, or
// else the one the leader would create (gatewayservice.Desired, which
// keeps the pod ports of the Services given): its listeners are served on
// the pod ports the leader would allocate. A planned Service has no
// status yet, so such a Gateway has no address (Programmed False,
// AddressNotAssigned), as none is known offline.
type PlannedServices struct {
	// Services are the options of the per-Gateway Services.
	Services gatewayservice.Options
	// Gateway are the input's options, to know the accepted Gateways.
	Gateway gatewayapi.Options
}

var _ gatewayapi.Addressing = (*PlannedServices)(nil)

// Assign assigns the Gateways as gatewayservice.Addressing does, over the
// snapshot's Services and the planned ones.
func (p *PlannedServices) Assign(snap *snapshot.Snapshot) map[snapshot.Key]gatewayapi.Assignment {
	var gateways []*gatewayv1.Gateway
	for _, gs := range gatewayapi.Compute(snap, p.Gateway).Gateways {
		if gs.Accepted {
			gateways = append(gateways, gs.Gateway)
		}
	}
	var existing []*corev1.Service
	for key, svc := range snap.Services {
		if key.Namespace == p.Services.Namespace {
			existing = append(existing, svc)
		}
	}
	plan := gatewayservice.Desired(gateways, existing, p.Services)
	planned := *snap
	planned.Services = maps.Clone(snap.Services)
	for _, svc := range append(plan.Create, plan.Update...) {
		planned.Services[snapshot.Key{Namespace: svc.Namespace, Name: svc.Name}] = svc
	}
	return (&gatewayservice.Addressing{Options: p.Services}).Assign(&planned)
}
