package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/gatewayservice"
	"github.com/ramjet-dev/ramjet/sources/offline"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// gatewayFlags are the flags of the Gateway API input.
type gatewayFlags struct {
	controllerName, serviceNamespace, serviceSelector, serviceType, portRange string
	listeners                                                                 []string
	// planServices (translate) serves each Gateway of the own-address
	// mode as if its Service existed (offline.PlannedServices).
	planServices bool
}

func (g *gatewayFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.controllerName, "gateway-controller-name", string(gatewayapi.DefaultControllerName), "spec.controllerName of the GatewayClasses to serve")
	fs.StringSliceVar(&g.listeners, "gateway-listener", nil, "PORT=NAME: serve every Gateway's listeners of port PORT on the base's listener NAME, all Gateways at the pod's address (shared mode); "+
		"without it each Gateway gets a Service of its own (see docs/gateway-api.md)")
	fs.StringVar(&g.serviceNamespace, "gateway-service-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the per-Gateway Services, the pods' own ($POD_NAMESPACE)")
	fs.StringVar(&g.serviceSelector, "gateway-service-selector", "", "k=v,...: the labels of the ingress pods, which the per-Gateway Services select")
	fs.StringVar(&g.serviceType, "gateway-service-type", string(corev1.ServiceTypeLoadBalancer), "type of the per-Gateway Services: LoadBalancer, NodePort or ClusterIP")
	fs.StringVar(&g.portRange, "gateway-port-range", fmt.Sprintf("%d-%d", gatewayservice.DefaultFirstPort, gatewayservice.DefaultLastPort),
		"FIRST-LAST: the pod ports the per-Gateway listeners take")
}

// input checks the flags and builds the Gateway API input, and, in the
// own-address mode, the options of the per-Gateway Services (nil in the
// shared mode).
func (g *gatewayFlags) input(base *config.Server, resolveExternalName bool, publishService string) (*gatewayapi.Input, *gatewayservice.Options, error) {
	in := &gatewayapi.Input{Options: gatewayapi.Options{ControllerName: gatewayv1.GatewayController(g.controllerName), SupportedFeatures: gatewayapi.Features}}
	in.Options.Resolve.AllowExternalName = resolveExternalName
	if len(g.listeners) > 0 {
		ports, err := gatewayapi.ParseListeners(g.listeners, base)
		if err != nil {
			return nil, nil, err
		}
		shared := &gatewayapi.Shared{Ports: ports}
		if key, ok := snapshot.ParseKey(publishService); ok {
			shared.Service = &key
		}
		in.Addressing = shared
		return in, nil, nil
	}
	opts, err := g.serviceOptions()
	if err != nil {
		return nil, nil, err
	}
	in.Addressing = &gatewayservice.Addressing{Options: *opts}
	if g.planServices {
		in.Addressing = &offline.PlannedServices{Services: *opts, Gateway: in.Options}
	}
	return in, opts, nil
}

func (g *gatewayFlags) serviceOptions() (*gatewayservice.Options, error) {
	selector, err := labels.ConvertSelectorToLabelsMap(g.serviceSelector)
	if err != nil {
		return nil, fmt.Errorf("--gateway-service-selector %q: %v", g.serviceSelector, err)
	}
	first, last, err := parsePortRange(g.portRange)
	if err != nil {
		return nil, err
	}
	opts := &gatewayservice.Options{Namespace: g.serviceNamespace, Selector: selector, Type: corev1.ServiceType(g.serviceType),
		PortRange: [2]int32{first, last}, ControllerName: gatewayv1.GatewayController(g.controllerName)}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("the per-Gateway Services (--gateway-service-*, --gateway-port-range): %w", err)
	}
	return opts, nil
}

func parsePortRange(s string) (int32, int32, error) {
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.Atoi(a)
	last, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || first < 1 || last > 65535 || first > last {
		return 0, 0, fmt.Errorf("--gateway-port-range %q: want FIRST-LAST, ports 1..65535, FIRST not above LAST", s)
	}
	return int32(first), int32(last), nil
}
