package gatewayservice

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// testOptions are the options of the tests: namespace "ramjet", range
// 20000-20999.
func testOptions() Options {
	return Options{
		Namespace:      "ramjet",
		Selector:       map[string]string{"app": "ramjet-ingress"},
		ControllerName: "ramjet.dev/gateway",
	}
}

// gateway is a Gateway of class "ramjet" with one listener per port.
func gateway(namespace, name string, ports ...int32) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: "ramjet"},
	}
	for _, p := range ports {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{
			Name: gatewayv1.SectionName(fmt.Sprintf("l%d", p)), Port: gatewayv1.PortNumber(p), Protocol: gatewayv1.HTTPProtocolType,
		})
	}
	return gw
}

// withAddresses is gw with spec.addresses "TYPE=VALUE" or "VALUE"
// (no type).
func withAddresses(gw *gatewayv1.Gateway, addresses ...string) *gatewayv1.Gateway {
	gw = gw.DeepCopy()
	for _, a := range addresses {
		var addr gatewayv1.GatewaySpecAddress
		if typ, value, ok := strings.Cut(a, "="); ok {
			addr = gatewayv1.GatewaySpecAddress{Type: (*gatewayv1.AddressType)(&typ), Value: value}
		} else {
			addr.Value = a
		}
		gw.Spec.Addresses = append(gw.Spec.Addresses, addr)
	}
	return gw
}

// applied is existing after the plan, as an API server would keep it
// (without the fields it defaults).
func applied(existing []*corev1.Service, plan Plan) []*corev1.Service {
	byName := map[string]*corev1.Service{}
	for _, s := range existing {
		byName[s.Namespace+"/"+s.Name] = s
	}
	for _, k := range plan.Delete {
		delete(byName, k.String())
	}
	for _, s := range append(slices.Clone(plan.Update), plan.Create...) {
		byName[s.Namespace+"/"+s.Name] = s.DeepCopy()
	}
	var out []*corev1.Service
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[k])
	}
	return out
}

// summary renders a plan as lines: "create shop/web 80>20000 443>20001",
// "update ...", "delete shop/web", "problem shop/web PortsExhausted [443]".
// Services are named by their Gateway; existing names deleted Services.
func summary(plan Plan, existing []*corev1.Service) []string {
	var out []string
	for verb, list := range map[string][]*corev1.Service{"create": plan.Create, "update": plan.Update} {
		for _, s := range list {
			out = append(out, verb+" "+describe(s))
		}
	}
	for _, k := range plan.Delete {
		out = append(out, "delete "+deletedGateway(k, existing))
	}
	for _, p := range plan.Problems {
		line := fmt.Sprintf("problem %s %s", p.Gateway, p.Reason)
		if len(p.Ports) > 0 {
			line += fmt.Sprint(" ", p.Ports)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

// describe is "namespace/name" of the Service's Gateway, then its ports,
// then " ip=ADDRESS" when it asks for a load balancer IP.
func describe(s *corev1.Service) string {
	var b strings.Builder
	b.WriteString(s.Annotations[AnnotationGatewayNamespace] + "/" + s.Annotations[AnnotationGatewayName])
	for _, p := range s.Spec.Ports {
		fmt.Fprintf(&b, " %d>%d", p.Port, p.TargetPort.IntVal)
	}
	if s.Spec.LoadBalancerIP != "" {
		b.WriteString(" ip=" + s.Spec.LoadBalancerIP)
	}
	return b.String()
}

// deletedGateway is the Gateway of the Service named k, or k itself.
func deletedGateway(k snapshot.Key, existing []*corev1.Service) string {
	for _, s := range existing {
		if s.Namespace == k.Namespace && s.Name == k.Name {
			if key, ok := gatewayOf(s); ok {
				return key.String()
			}
		}
	}
	return "service " + k.String()
}
