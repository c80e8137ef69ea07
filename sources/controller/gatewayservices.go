package controller

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/gatewayservice"
)

// GatewayServices keeps, on the leader, one Service per accepted Gateway of
// our classes (the own-address mode, see package gatewayservice): each
// outcome plans the Services from its Gateways and the snapshot's
// Services, and writes the plan when it is not empty. The Services come
// back through the watch, and the next rebuild serves their ports.
type GatewayServices struct {
	client kubernetes.Interface
	opts   gatewayservice.Options
	log    *slog.Logger
}

// NewGatewayServices keeps the per-Gateway Services with client.
func NewGatewayServices(client kubernetes.Interface, opts gatewayservice.Options, log *slog.Logger) *GatewayServices {
	return &GatewayServices{client: client, opts: opts, log: log}
}

// Report plans and writes the Services of the outcome's Gateways.
func (g *GatewayServices) Report(ctx context.Context, o Outcome) {
	res := GatewayResult(o)
	if res == nil {
		return
	}
	plan := servicePlan(o, res, g.opts)
	for _, p := range plan.Problems {
		g.log.Warn("a Gateway's Service", "gateway", p.Gateway.String(), "reason", string(p.Reason), "problem", p.Message)
	}
	if plan.Empty() {
		return
	}
	err := gatewayservice.Provisioner{Options: g.opts}.Apply(ctx, g.client, plan)
	if err != nil {
		g.log.Error("writing the per-Gateway Services", "error", err)
		return
	}
	g.log.Info("per-Gateway Services written", "created", len(plan.Create), "updated", len(plan.Update), "deleted", len(plan.Delete))
}

// servicePlan plans the Services of the accepted Gateways of res from the
// Services of o's snapshot. It is a pure function of its arguments: the
// Gateway statuses show the problems of the plan GatewayServices writes.
func servicePlan(o Outcome, res *gatewayapi.Result, opts gatewayservice.Options) gatewayservice.Plan {
	var gateways []*gatewayv1.Gateway
	for _, gs := range res.Gateways {
		if gs.Accepted {
			gateways = append(gateways, gs.Gateway)
		}
	}
	var services []*corev1.Service
	for key, svc := range o.Snapshot.Services {
		if key.Namespace == opts.Namespace {
			services = append(services, svc)
		}
	}
	return gatewayservice.Desired(gateways, services, opts)
}
