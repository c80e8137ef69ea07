package gatewayservice

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
)

// GatewayConditionInfrastructureIgnored is True on a Gateway while a label
// or annotation of its spec.infrastructure is not copied onto its Service
// (reason NotCopied; the message names each key and why). The Gateway is
// served all the same, so Programmed does not change; the condition is
// absent when every key is copied.
const GatewayConditionInfrastructureIgnored = gatewayapi.ConditionPrefix + "InfrastructureIgnored"

// Status returns computed, the status gatewayapi computed for gw, with the
// problems of gw's Service:
//   - NameTaken: the Gateway has no Service, so no address: Programmed is
//     False with reason AddressNotAssigned, and so is every listener's
//     (reason Pending), with the problem as the message.
//   - PortsExhausted: the listeners of the ports without a pod port are not
//     programmed (Pending); when no port got one, the Gateway has no
//     Service and Programmed is False with reason NoResources (the spec's
//     reason for insufficient infrastructure resources).
//   - InfrastructureIgnored: GatewayConditionInfrastructureIgnored.
//
// A Programmed condition that is already False for another reason (the
// Gateway or listener is invalid) is kept. computed does not change.
func Status(gw *gatewayv1.Gateway, computed gatewayv1.GatewayStatus, problems []Problem) gatewayv1.GatewayStatus {
	if len(problems) == 0 {
		return computed
	}
	out := computed
	out.Conditions = slices.Clone(computed.Conditions)
	out.Listeners = slices.Clone(computed.Listeners)
	for i := range out.Listeners {
		out.Listeners[i].Conditions = slices.Clone(out.Listeners[i].Conditions)
	}
	gen := gw.Generation
	var ignored []string
	for _, p := range problems {
		switch p.Reason {
		case NameTaken:
			notProgrammed(out.Conditions, string(gatewayv1.GatewayReasonAddressNotAssigned), p.Message, gen)
			listenersNotProgrammed(gw, out.Listeners, nil, p.Message)
		case PortsExhausted:
			listenersNotProgrammed(gw, out.Listeners, p.Ports, p.Message)
			if everyPort(gw, p.Ports) {
				notProgrammed(out.Conditions, string(gatewayv1.GatewayReasonNoResources), p.Message, gen)
			}
		case InfrastructureIgnored:
			ignored = append(ignored, p.Message)
		}
	}
	if len(ignored) > 0 {
		out.Conditions = append(out.Conditions, metav1.Condition{Type: GatewayConditionInfrastructureIgnored, Status: metav1.ConditionTrue,
			Reason: "NotCopied", Message: strings.Join(ignored, "; "), ObservedGeneration: gen})
	}
	return out
}

// notProgrammed sets the Programmed condition of conds to False with
// reason and message, unless it is False for another reason than a
// missing address.
func notProgrammed(conds []metav1.Condition, reason, message string, gen int64) {
	c := meta.FindStatusCondition(conds, string(gatewayv1.GatewayConditionProgrammed))
	if c == nil || (c.Status != metav1.ConditionTrue && c.Reason != string(gatewayv1.GatewayReasonAddressNotAssigned)) {
		return
	}
	c.Status, c.Reason, c.Message, c.ObservedGeneration = metav1.ConditionFalse, reason, message, gen
}

// listenersNotProgrammed makes the programmed listeners of the given ports
// (nil: every port) not programmed, Pending with message.
func listenersNotProgrammed(gw *gatewayv1.Gateway, listeners []gatewayv1.ListenerStatus, ports []int32, message string) {
	for i := range listeners {
		l := &listeners[i]
		spec := slices.IndexFunc(gw.Spec.Listeners, func(s gatewayv1.Listener) bool { return s.Name == l.Name })
		if spec < 0 || (ports != nil && !slices.Contains(ports, int32(gw.Spec.Listeners[spec].Port))) {
			continue
		}
		c := meta.FindStatusCondition(l.Conditions, string(gatewayv1.ListenerConditionProgrammed))
		if c != nil && c.Status == metav1.ConditionTrue {
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(gatewayv1.ListenerReasonPending), message
		}
	}
}

// everyPort reports whether ports holds every listener port of gw.
func everyPort(gw *gatewayv1.Gateway, ports []int32) bool {
	for _, l := range gw.Spec.Listeners {
		if !slices.Contains(ports, int32(l.Port)) {
			return false
		}
	}
	return true
}
