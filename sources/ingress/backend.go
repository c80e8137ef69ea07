package ingress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// backend resolves an Ingress backend to the ready addresses of its
// Service port. A backend that cannot be resolved gets a finding and no
// members: its route answers 503.
func (t *translation) backend(b *networkingv1.IngressBackend, field string) *core.Backend {
	if b.Service == nil {
		t.note(core.ServiceNotFound, "%s: only Service backends are supported (resource backends are not); the path answers 503", field)
		return &core.Backend{Namespace: t.ing.Namespace, Service: "-", Port: "-"}
	}
	port := b.Service.Port.Name
	if port == "" {
		port = strconv.Itoa(int(b.Service.Port.Number))
	}
	out := &core.Backend{Namespace: t.ing.Namespace, Service: b.Service.Name, Port: port}
	svcKey := snapshot.Key{Namespace: t.ing.Namespace, Name: b.Service.Name}
	t.checkBackendTLS(svcKey)
	members, problems := Resolve(t.snap, svcKey, b.Service.Port, ResolveOptions{
		AllowExternalName: t.opts.AllowExternalName,
		ServiceUpstream:   t.c.Settings.Pool.ServiceUpstream,
	})
	out.Members = members
	for _, problem := range problems {
		if len(members) == 0 {
			t.note(problem.Reason, "%s: %s; %s", field, problem.Message, t.emptyPoolAnswer(field))
		} else {
			t.note(problem.Reason, "%s: %s", field, problem.Message)
		}
	}
	return out
}

// emptyPoolAnswer says who answers the requests of a path (field) whose
// backend has no members: the default-backend annotation's Service when it
// has members (ramjetd's fallback pool), else 503.
func (t *translation) emptyPoolAnswer(field string) string {
	ep := t.c.Settings.ErrorPages
	if ep == nil || ep.Backend == nil || len(ep.Backend.Members) == 0 || !strings.HasPrefix(field, "spec.rules[") {
		return "the path answers 503"
	}
	return fmt.Sprintf("the default-backend Service %s/%s answers instead", ep.Backend.Namespace, ep.Backend.Service)
}

// ResolveOptions change how a Service port resolves.
type ResolveOptions struct {
	// AllowExternalName follows ExternalName Services with one DNS member.
	AllowExternalName bool
	// ServiceUpstream uses the ClusterIP instead of the endpoints.
	ServiceUpstream bool
}

// Problem is why a backend has no members, or why some of its addresses
// are not members.
type Problem struct {
	Reason  core.Reason
	Message string
}

// Resolve returns the members of a Service port: the ready, serving, not
// terminating addresses (IPv4 and IPv6) of the Service's EndpointSlices for
// the port, matched by the Service port's name. Every address passes the
// address rule (config.CheckMemberIP); those it refuses are left out with
// an AddressRefused problem and the others serve. A backend without
// members has a problem that says why. Resolve is used for Ingress
// backends and for --default-backend.
func Resolve(snap *snapshot.Snapshot, svcKey snapshot.Key, port networkingv1.ServiceBackendPort, opts ResolveOptions) ([]config.Member, []Problem) {
	svc := snap.Services[svcKey]
	if svc == nil {
		return nil, []Problem{{core.ServiceNotFound, fmt.Sprintf("Service %s not found", svcKey)}}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return externalName(svc, port, opts)
	}
	sp := servicePort(svc, port)
	if sp == nil {
		return nil, []Problem{{core.ServiceNotFound, fmt.Sprintf("Service %s has no port %s", svcKey, portString(port))}}
	}
	if opts.ServiceUpstream {
		return clusterIP(svc, sp)
	}
	slices_ := snap.EndpointSlices[svcKey]
	if len(slices_) == 0 {
		return nil, []Problem{{core.ServiceNotFound, fmt.Sprintf("Service %s has no EndpointSlices", svcKey)}}
	}
	members, refused := readyMembers(slices_, sp.Name)
	var problems []Problem
	if len(refused) > 0 {
		problems = append(problems, refusedEndpoints(svcKey, refused, len(members)))
	}
	if len(members) == 0 && len(refused) == 0 {
		problems = append(problems, Problem{core.NoEndpoints, fmt.Sprintf("Service %s has no ready endpoints for port %s", svcKey, portString(port))})
	}
	return members, problems
}

// maxNamed bounds the refused addresses one finding names.
const maxNamed = 5

// refusedEndpoints is the problem of the endpoints the address rule
// refused: it names the Service and the addresses (the first maxNamed) with
// their kinds.
func refusedEndpoints(svcKey snapshot.Key, refused []string, served int) Problem {
	named := refused[:min(len(refused), maxNamed)]
	list := strings.Join(named, ", ")
	if more := len(refused) - len(named); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	what, verb := "endpoint", "is"
	if len(refused) > 1 {
		what, verb = "endpoints", "are"
	}
	msg := fmt.Sprintf("Service %s: %s %s %s left out, since a member may not be a loopback, unspecified, link-local, multicast or broadcast address "+
		"(it would point the proxy at itself, its node or a cloud metadata service)", svcKey, what, list, verb)
	switch served {
	case 0:
	case 1:
		msg += "; 1 other member serves"
	default:
		msg += fmt.Sprintf("; the %d other members serve", served)
	}
	return Problem{core.AddressRefused, msg}
}

func portString(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return core.Quote(p.Name)
	}
	return strconv.Itoa(int(p.Number))
}

// servicePort finds the Service port an Ingress backend names, by number
// or by name.
func servicePort(svc *corev1.Service, port networkingv1.ServiceBackendPort) *corev1.ServicePort {
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if port.Name != "" && sp.Name == port.Name || port.Name == "" && sp.Port == port.Number {
			return sp
		}
	}
	return nil
}

// readyMembers collects the ready endpoints of the slices' port named
// portName (EndpointSlice ports carry the Service port's name; "" for an
// unnamed one), sorted and without duplicates, and the addresses the
// address rule refuses, each with why ("127.0.0.1 (loopback)").
func readyMembers(slices_ []*discoveryv1.EndpointSlice, portName string) (members []config.Member, refused []string) {
	seen, seenRefused := map[string]bool{}, map[string]bool{}
	for _, s := range slices_ {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		number, ok := slicePort(s, portName)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			if !usable(ep.Conditions) || len(ep.Addresses) == 0 {
				continue
			}
			if why := refusal(ep.Addresses[0]); why != "" {
				if !seenRefused[why] {
					seenRefused[why] = true
					refused = append(refused, why)
				}
				continue
			}
			addr := net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(number)))
			if !seen[addr] {
				seen[addr] = true
				members = append(members, config.Member{Address: addr})
			}
		}
	}
	slices.SortFunc(members, func(a, b config.Member) int { return strings.Compare(a.Address, b.Address) })
	slices.Sort(refused)
	return members, refused
}

// refusal says why an address of the API may not be a member, naming it
// and its kind ("127.0.0.1 (loopback)"), or is empty when it may.
func refusal(address string) string {
	ip, err := netip.ParseAddr(address)
	if err != nil {
		return core.Quote(address) + " (not an IP address)"
	}
	var refused *config.AddressError
	if errors.As(config.CheckMemberIP(ip), &refused) {
		return fmt.Sprintf("%s (%s)", ip, refused.Kind)
	}
	return ""
}

func slicePort(s *discoveryv1.EndpointSlice, name string) (int32, bool) {
	for _, p := range s.Ports {
		pname := ""
		if p.Name != nil {
			pname = *p.Name
		}
		if pname == name && p.Port != nil {
			return *p.Port, true
		}
	}
	return 0, false
}

// usable is ready (nil counts as ready), serving and not terminating.
func usable(c discoveryv1.EndpointConditions) bool {
	return (c.Ready == nil || *c.Ready) && (c.Serving == nil || *c.Serving) && (c.Terminating == nil || !*c.Terminating)
}

// clusterIP is the one member of service-upstream: the ClusterIP and the
// Service port, when it passes the address rule.
func clusterIP(svc *corev1.Service, sp *corev1.ServicePort) ([]config.Member, []Problem) {
	ip := svc.Spec.ClusterIP
	if ip == "" || ip == corev1.ClusterIPNone {
		return nil, []Problem{{core.ServiceNotFound, fmt.Sprintf("Service %s/%s has no ClusterIP (service-upstream needs one)", svc.Namespace, svc.Name)}}
	}
	if why := refusal(ip); why != "" {
		return nil, []Problem{{core.AddressRefused, fmt.Sprintf("Service %s/%s: its ClusterIP %s may not be a member (service-upstream)", svc.Namespace, svc.Name, why)}}
	}
	return []config.Member{{Address: net.JoinHostPort(ip, strconv.Itoa(int(sp.Port)))}}, nil
}

// externalName follows an ExternalName Service only when allowed: a
// Service of one namespace could otherwise point the proxy at any host
// (CVE-2021-25740). An IP address passes the address rule here; ramjetd
// resolves a name at each connection and applies the rule to its results.
func externalName(svc *corev1.Service, port networkingv1.ServiceBackendPort, opts ResolveOptions) ([]config.Member, []Problem) {
	if !opts.AllowExternalName {
		return nil, []Problem{{core.ServiceNotFound, fmt.Sprintf("Service %s/%s is of type ExternalName, which is not followed unless --allow-external-name-services is set", svc.Namespace, svc.Name)}}
	}
	number := port.Number
	if port.Name != "" {
		sp := servicePort(svc, port)
		if sp == nil {
			return nil, []Problem{{core.ServiceNotFound, fmt.Sprintf("ExternalName Service %s/%s has no port %s", svc.Namespace, svc.Name, portString(port))}}
		}
		number = sp.Port
	}
	host := strings.TrimSuffix(svc.Spec.ExternalName, ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := config.CheckMemberIP(ip); err != nil {
			return nil, []Problem{{core.AddressRefused, fmt.Sprintf("ExternalName Service %s/%s: %s, which an ExternalName Service may not point the proxy at", svc.Namespace, svc.Name, err)}}
		}
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(number)))
	if err := config.ValidateMemberAddress(addr); err != nil {
		return nil, []Problem{{core.ServiceNotFound, fmt.Sprintf("ExternalName Service %s/%s: its externalName %s is neither an IP address nor a DNS name", svc.Namespace, svc.Name, core.Quote(svc.Spec.ExternalName))}}
	}
	return []config.Member{{Address: addr}}, nil
}
