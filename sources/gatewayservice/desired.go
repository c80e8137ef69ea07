package gatewayservice

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// target is the Service one Gateway should have.
type target struct {
	key     snapshot.Key
	gateway *gatewayv1.Gateway
	name    string
	// current is this controller's Service of the Gateway, or nil.
	current *corev1.Service
	// ports are the Gateway's distinct listener ports, ascending.
	ports []int32
	// podPorts maps a Gateway port to its pod port.
	podPorts map[int32]int32
}

// Desired plans the Services of gateways (those of the controller's classes
// that are accepted; the caller chooses them), given the Services that
// exist (any Services: only this controller's are changed). It keeps the
// pod ports already on the Services, allocates the lowest free pod ports
// for new Gateway ports, updates a Service only when a field Ramjet sets
// differs, and deletes Ramjet's Services whose Gateway is not in gateways.
// The plan's lists are sorted by name.
func Desired(gateways []*gatewayv1.Gateway, existing []*corev1.Service, opts Options) Plan {
	opts = opts.withDefaults()
	ours, taken := map[string]*corev1.Service{}, map[string]bool{}
	for _, svc := range existing {
		switch {
		case opts.owns(svc):
			ours[svc.Name] = svc
		case svc.Namespace == opts.Namespace:
			taken[svc.Name] = true
		}
	}
	var plan Plan
	targets := targetsOf(gateways, ours, taken, &plan)
	allocate(targets, slices.Collect(maps.Values(ours)), opts.PortRange, &plan)
	kept := map[string]bool{}
	for _, t := range targets {
		if len(t.podPorts) == 0 {
			continue
		}
		kept[t.name] = true
		want := t.service(opts, &plan)
		switch {
		case t.current == nil:
			plan.Create = append(plan.Create, want)
		case differs(t.current, want):
			plan.Update = append(plan.Update, updated(t.current, want))
		}
	}
	for name := range ours {
		if !kept[name] {
			plan.Delete = append(plan.Delete, snapshot.Key{Namespace: opts.Namespace, Name: name})
		}
	}
	sortPlan(&plan)
	return plan
}

// targetsOf returns a target for each Gateway, by key and without
// duplicates, leaving out those whose Service name a foreign Service
// holds.
func targetsOf(gateways []*gatewayv1.Gateway, ours map[string]*corev1.Service, taken map[string]bool, plan *Plan) []*target {
	byKey := map[snapshot.Key]*target{}
	for _, gw := range gateways {
		key := snapshot.Key{Namespace: gw.Namespace, Name: gw.Name}
		name := ServiceName(key)
		if taken[name] {
			plan.Problems = append(plan.Problems, Problem{Gateway: key, Reason: NameTaken,
				Message: fmt.Sprintf("Service %s exists and is not managed by Ramjet, so the Gateway has no address", name)})
			continue
		}
		t := &target{key: key, gateway: gw, name: name, podPorts: map[int32]int32{}}
		if svc := ours[name]; svc != nil {
			if k, ok := gatewayOf(svc); ok && k == key {
				t.current = svc
			}
		}
		for _, l := range gw.Spec.Listeners {
			t.ports = append(t.ports, int32(l.Port))
		}
		slices.Sort(t.ports)
		t.ports = slices.Compact(t.ports)
		byKey[key] = t
	}
	return slices.SortedFunc(maps.Values(byKey), func(a, b *target) int {
		return cmp.Or(cmp.Compare(a.key.Namespace, b.key.Namespace), cmp.Compare(a.key.Name, b.key.Name))
	})
}

// allocate fills in the targets' pod ports: first the ones their Services
// hold (in range, not claimed by an earlier Gateway), then the lowest pod
// ports no Service of ours uses for the rest.
func allocate(targets []*target, ours []*corev1.Service, portRange [2]int32, plan *Plan) {
	used := map[int32]bool{}
	for _, svc := range ours {
		for _, p := range svc.Spec.Ports {
			used[p.TargetPort.IntVal] = true
		}
	}
	claimed := map[int32]bool{}
	for _, t := range targets {
		if t.current == nil {
			continue
		}
		for _, p := range t.current.Spec.Ports {
			pod := p.TargetPort.IntVal
			if p.TargetPort.Type == intstr.Int && pod >= portRange[0] && pod <= portRange[1] &&
				!claimed[pod] && slices.Contains(t.ports, p.Port) && t.podPorts[p.Port] == 0 {
				claimed[pod] = true
				t.podPorts[p.Port] = pod
			}
		}
	}
	next := portRange[0]
	for _, t := range targets {
		var missing []int32
		for _, port := range t.ports {
			if t.podPorts[port] != 0 {
				continue
			}
			for next <= portRange[1] && used[next] {
				next++
			}
			if next > portRange[1] {
				missing = append(missing, port)
				continue
			}
			used[next] = true
			t.podPorts[port] = next
		}
		if len(missing) > 0 {
			plan.Problems = append(plan.Problems, Problem{Gateway: t.key, Reason: PortsExhausted, Ports: missing,
				Message: fmt.Sprintf("no free pod port in %d-%d for Gateway port(s) %s", portRange[0], portRange[1], joinPorts(missing))})
		}
	}
}

// service is the Service the target should have.
func (t *target) service(opts Options, plan *Plan) *corev1.Service {
	labels, annotations := t.metadata(opts, plan)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: t.name, Labels: labels, Annotations: annotations},
		Spec:       corev1.ServiceSpec{Type: opts.Type, Selector: maps.Clone(opts.Selector)},
	}
	if opts.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = requestedIP(t.gateway)
	}
	for _, port := range t.ports {
		if pod := t.podPorts[port]; pod != 0 {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: "port-" + strconv.Itoa(int(port)), Protocol: corev1.ProtocolTCP,
				Port: port, TargetPort: intstr.FromInt32(pod),
			})
		}
	}
	return svc
}

// requestedIP is the first address of the Gateway's spec.addresses of
// type IPAddress (or without a type) whose value is an IP address, or "".
// It becomes the Service's spec.loadBalancerIP, the field most load
// balancers take a requested address from; Hostname addresses and further
// IP addresses are not passed on.
func requestedIP(gw *gatewayv1.Gateway) string {
	for _, a := range gw.Spec.Addresses {
		if a.Type != nil && *a.Type != gatewayv1.IPAddressType {
			continue
		}
		if ip, err := netip.ParseAddr(a.Value); err == nil {
			return ip.String()
		}
	}
	return ""
}

// joinPorts renders ports as "80, 443".
func joinPorts(ports []int32) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ", ")
}

// sortPlan orders the plan's Services by name and its problems by
// Gateway, reason and message.
func sortPlan(p *Plan) {
	byName := func(a, b *corev1.Service) int { return cmp.Compare(a.Name, b.Name) }
	slices.SortFunc(p.Create, byName)
	slices.SortFunc(p.Update, byName)
	slices.SortFunc(p.Delete, func(a, b snapshot.Key) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Gateway.Namespace, b.Gateway.Namespace), cmp.Compare(a.Gateway.Name, b.Gateway.Name),
			cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message))
	})
}
