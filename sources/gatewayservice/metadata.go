package gatewayservice

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
)

// metadata returns the labels and annotations of the target's Service:
// the valid, unreserved ones of the Gateway's spec.infrastructure, then
// Ramjet's, with the record of the copied keys.
func (t *target) metadata(opts Options, plan *Plan) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	if infra := t.gateway.Spec.Infrastructure; infra != nil {
		for k, v := range infra.Labels {
			t.copyKey(labels, "labels", string(k), string(v), len(validation.IsValidLabelValue(string(v))) == 0, plan)
		}
		for k, v := range infra.Annotations {
			t.copyKey(annotations, "annotations", string(k), string(v), true, plan)
		}
	}
	if copied := slices.Sorted(maps.Keys(annotations)); len(copied) > 0 {
		annotations[annotationAnnotations] = strings.Join(copied, ",")
	}
	if len(labels) > 0 {
		annotations[annotationLabels] = strings.Join(slices.Sorted(maps.Keys(labels)), ",")
	}
	labels[LabelManagedBy] = ManagedBy
	labels[LabelGateway] = gatewayHash(t.key)
	for k, v := range map[string]string{
		gatewayv1.GatewayNameLabelKey:      t.key.Name,
		gatewayv1.GatewayClassNameLabelKey: string(t.gateway.Spec.GatewayClassName),
	} {
		if v != "" && len(validation.IsValidLabelValue(v)) == 0 {
			labels[k] = v
		}
	}
	annotations[AnnotationController] = string(opts.ControllerName)
	annotations[AnnotationGatewayNamespace] = t.key.Namespace
	annotations[AnnotationGatewayName] = t.key.Name
	return labels, annotations
}

// copyKey copies one key of spec.infrastructure into m, or reports why not.
func (t *target) copyKey(m map[string]string, field, k, v string, validValue bool, plan *Plan) {
	why := ""
	switch {
	case reserved(k):
		why = "is reserved for Ramjet"
	case len(validation.IsQualifiedName(k)) > 0:
		why = "is not a valid key"
	case !validValue:
		why = "has an invalid value"
	default:
		m[k] = v
		return
	}
	plan.Problems = append(plan.Problems, Problem{Gateway: t.key, Reason: InfrastructureIgnored,
		Message: fmt.Sprintf("spec.infrastructure.%s: %s %s and is not copied onto the Gateway's Service", field, core.Quote(k), why)})
}

// reserved reports whether a label or annotation key is one Ramjet sets.
func reserved(k string) bool {
	return k == LabelManagedBy || strings.HasPrefix(k, prefix) || strings.HasPrefix(k, gatewayv1.GroupName+"/")
}

// differs reports whether a field Ramjet sets differs between the current
// Service and the wanted one.
func differs(current, want *corev1.Service) bool {
	if current.Spec.Type != want.Spec.Type || !maps.Equal(current.Spec.Selector, want.Spec.Selector) ||
		current.Spec.LoadBalancerIP != want.Spec.LoadBalancerIP ||
		len(current.Spec.Ports) != len(want.Spec.Ports) {
		return true
	}
	for i, p := range current.Spec.Ports {
		w := want.Spec.Ports[i]
		if p.Name != w.Name || p.Protocol != w.Protocol || p.Port != w.Port || p.TargetPort != w.TargetPort {
			return true
		}
	}
	labels, annotations := merged(current, want)
	return !maps.Equal(labels, current.Labels) || !maps.Equal(annotations, current.Annotations)
}

// updated is the current Service with the fields Ramjet sets taken from
// want; the node ports of ports that stay are kept.
func updated(current, want *corev1.Service) *corev1.Service {
	svc := current.DeepCopy()
	svc.Labels, svc.Annotations = merged(current, want)
	svc.Spec.Type = want.Spec.Type
	svc.Spec.Selector = want.Spec.Selector
	svc.Spec.LoadBalancerIP = want.Spec.LoadBalancerIP
	nodePorts := map[int32]int32{}
	for _, p := range current.Spec.Ports {
		nodePorts[p.Port] = p.NodePort
	}
	svc.Spec.Ports = slices.Clone(want.Spec.Ports)
	if want.Spec.Type != corev1.ServiceTypeClusterIP {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = nodePorts[svc.Spec.Ports[i].Port]
		}
	}
	return svc
}

// merged returns the current Service's labels and annotations with the
// ones Ramjet set (its own keys and the recorded copies) replaced by
// want's; keys others added stay.
func merged(current, want *corev1.Service) (labels, annotations map[string]string) {
	labels, annotations = maps.Clone(current.Labels), maps.Clone(current.Annotations)
	drop := func(m map[string]string, record string) map[string]string {
		if m == nil {
			m = map[string]string{}
		}
		for k := range strings.SplitSeq(current.Annotations[record], ",") {
			delete(m, k)
		}
		maps.DeleteFunc(m, func(k, _ string) bool { return reserved(k) })
		return m
	}
	labels, annotations = drop(labels, annotationLabels), drop(annotations, annotationAnnotations)
	maps.Copy(labels, want.Labels)
	maps.Copy(annotations, want.Annotations)
	return labels, annotations
}
