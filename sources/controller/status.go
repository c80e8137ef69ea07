package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Status writes status.loadBalancer of the Ingresses this controller serves:
// the address of the publish Service, or the fixed publish addresses. It
// writes only when the address changed, and never clears it (not at
// shutdown either: another replica takes over).
type Status struct {
	client kubernetes.Interface
	target Publish
	log    *slog.Logger
	// writtenOver holds, for the Ingresses whose status the last report
	// wrote, the resourceVersion it wrote over; lastPatch is what it wrote.
	writtenOver map[snapshot.Key]string
	lastPatch   []byte
}

// Publish is where the Ingresses are reached: a Service's address, or
// fixed addresses.
type Publish struct {
	service *snapshot.Key // --publish-service
	fixed   []networkingv1.IngressLoadBalancerIngress
}

// ParsePublish checks --publish-service ("namespace/name") and
// --publish-address (comma-separated IP addresses or host names); one of
// them is needed.
func ParsePublish(publishService, publishAddress string) (Publish, error) {
	switch {
	case publishService != "" && publishAddress != "":
		return Publish{}, fmt.Errorf("--publish-service and --publish-address: give one of them")
	case publishService != "":
		key, ok := snapshot.ParseKey(publishService)
		if !ok {
			return Publish{}, fmt.Errorf("--publish-service %q: want namespace/name", publishService)
		}
		return Publish{service: &key}, nil
	case publishAddress != "":
		fixed, err := ParseAddresses(publishAddress)
		if err != nil {
			return Publish{}, fmt.Errorf("--publish-address: %w", err)
		}
		return Publish{fixed: fixed}, nil
	}
	return Publish{}, fmt.Errorf("the Ingresses' status needs --publish-service or --publish-address; or turn it off with --no-status-update")
}

// NewStatus writes the status of the served Ingresses with target's
// address.
func NewStatus(client kubernetes.Interface, target Publish, log *slog.Logger) *Status {
	return &Status{client: client, target: target, log: log}
}

// ParseAddresses reads a comma-separated list of IP addresses and host
// names.
func ParseAddresses(list string) ([]networkingv1.IngressLoadBalancerIngress, error) {
	var out []networkingv1.IngressLoadBalancerIngress
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if ip, err := netip.ParseAddr(item); err == nil {
			out = append(out, networkingv1.IngressLoadBalancerIngress{IP: ip.String()})
			continue
		}
		if !validHostName(item) {
			return nil, fmt.Errorf("%s is neither an IP address nor a host name", core.Quote(item))
		}
		out = append(out, networkingv1.IngressLoadBalancerIngress{Hostname: item})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no address in %s", core.Quote(list))
	}
	return out, nil
}

// Report writes the address to the served Ingresses whose status differs,
// once the configuration that serves them is published. A write that
// failed is tried again on the next report; one that succeeded is not
// repeated while the snapshot still shows the version it was written over.
func (s *Status) Report(ctx context.Context, o Outcome) {
	if !o.Published {
		return
	}
	addresses, err := s.addresses(ctx)
	if err != nil {
		s.log.Warn("the publish address is unknown; the Ingresses' status is left as it is", "error", err)
		return
	}
	patch, err := statusPatch(addresses)
	if err != nil {
		s.log.Error("encoding the Ingress status", "error", err)
		return
	}
	written := make(map[snapshot.Key]string, len(s.writtenOver))
	for _, ing := range o.Snapshot.Ingresses {
		key := snapshot.Key{Namespace: ing.Namespace, Name: ing.Name}
		if o.Output.Objects[ingress.OriginOf(ing)] != core.Served || equality.Semantic.DeepEqual(ing.Status.LoadBalancer.Ingress, addresses) {
			continue
		}
		if rv := s.writtenOver[key]; rv == ing.ResourceVersion && bytes.Equal(s.lastPatch, patch) {
			written[key] = rv // written; the watch has not brought it yet
			continue
		}
		_, err := s.client.NetworkingV1().Ingresses(ing.Namespace).Patch(ctx, ing.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if err != nil {
			s.log.Warn("writing the Ingress status failed; it is tried again", "ingress", key.String(), "error", err)
			continue
		}
		written[key] = ing.ResourceVersion
	}
	s.writtenOver, s.lastPatch = written, patch
}

// statusPatch is the merge patch that sets status.loadBalancer.ingress
// (and nothing else of the object).
func statusPatch(addresses []networkingv1.IngressLoadBalancerIngress) ([]byte, error) {
	return json.Marshal(map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": addresses}}})
}

// addresses is where the Ingresses are reached.
func (s *Status) addresses(ctx context.Context) ([]networkingv1.IngressLoadBalancerIngress, error) {
	service := s.target.service
	if service == nil {
		return s.target.fixed, nil
	}
	svc, err := s.client.CoreV1().Services(service.Namespace).Get(ctx, service.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("--publish-service %s: %w", service, err)
	}
	addresses := serviceAddresses(svc)
	if len(addresses) == 0 {
		return nil, fmt.Errorf("--publish-service %s has no address yet", service)
	}
	return addresses, nil
}

// serviceAddresses is a Service's address as ingress-nginx publishes it:
// the load balancer's addresses and the external IPs of a LoadBalancer
// Service, the external name of an ExternalName one, otherwise the
// external IPs or else the cluster IP.
func serviceAddresses(svc *corev1.Service) []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		return []networkingv1.IngressLoadBalancerIngress{{Hostname: svc.Spec.ExternalName}}
	case corev1.ServiceTypeLoadBalancer:
		for _, lb := range svc.Status.LoadBalancer.Ingress {
			out = append(out, networkingv1.IngressLoadBalancerIngress{IP: lb.IP, Hostname: lb.Hostname})
		}
	}
	for _, ip := range svc.Spec.ExternalIPs {
		out = append(out, networkingv1.IngressLoadBalancerIngress{IP: ip})
	}
	if len(out) == 0 && svc.Spec.Type != corev1.ServiceTypeLoadBalancer && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		out = append(out, networkingv1.IngressLoadBalancerIngress{IP: svc.Spec.ClusterIP})
	}
	slices.SortFunc(out, func(a, b networkingv1.IngressLoadBalancerIngress) int {
		return strings.Compare(a.IP+a.Hostname, b.IP+b.Hostname)
	})
	return out
}

// validHostName checks a DNS name: labels of letters, digits and '-'.
func validHostName(name string) bool {
	if len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
