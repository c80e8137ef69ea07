package gatewayservice

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestDesired plans the Gateways of after against the Services that
// planning before from nothing made (changed by edit), and checks the plan.
func TestDesired(t *testing.T) {
	a80, b80 := gateway("shop", "a", 80), gateway("shop", "b", 80)
	foreign := func(namespace, name string, labels, annotations map[string]string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, Annotations: annotations},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(20000)}}},
		}
	}
	ours := map[string]string{LabelManagedBy: ManagedBy}
	cases := []struct {
		name          string
		before, after []*gatewayv1.Gateway
		edit          func([]*corev1.Service) []*corev1.Service
		opts          func(*Options)
		want          []string
	}{
		{name: "new Gateway", after: []*gatewayv1.Gateway{gateway("shop", "web", 443, 80, 80)},
			want: []string{"create shop/web 80>20000 443>20001"}},
		{name: "nothing changed", before: []*gatewayv1.Gateway{a80, b80}, after: []*gatewayv1.Gateway{b80, a80}},
		{name: "added port keeps the others' pod ports",
			before: []*gatewayv1.Gateway{a80, b80}, after: []*gatewayv1.Gateway{gateway("shop", "a", 80, 8080), b80},
			want: []string{"update shop/a 80>20000 8080>20002"}},
		{name: "removed port keeps the others' pod ports",
			before: []*gatewayv1.Gateway{gateway("shop", "a", 80, 443), b80}, after: []*gatewayv1.Gateway{gateway("shop", "a", 443), b80},
			want: []string{"update shop/a 443>20001"}},
		{name: "a removed port is reused only once no Service names it",
			before: []*gatewayv1.Gateway{gateway("shop", "a", 80, 443)}, after: []*gatewayv1.Gateway{gateway("shop", "a", 443), b80},
			want: []string{"create shop/b 80>20002", "update shop/a 443>20001"}},
		{name: "two Gateways on one port get two pod ports", after: []*gatewayv1.Gateway{b80, a80},
			want: []string{"create shop/a 80>20000", "create shop/b 80>20001"}},
		{name: "a pod port two Services claim stays with the first Gateway",
			before: []*gatewayv1.Gateway{a80, b80}, after: []*gatewayv1.Gateway{a80, b80},
			edit: func(s []*corev1.Service) []*corev1.Service {
				s[1].Spec.Ports[0].TargetPort = s[0].Spec.Ports[0].TargetPort
				return s
			},
			want: []string{"update shop/b 80>20001"}},
		{name: "range exhausted",
			after: []*gatewayv1.Gateway{gateway("shop", "a", 80, 443, 8080), b80},
			opts:  func(o *Options) { o.PortRange = [2]int32{20000, 20001} },
			want:  []string{"create shop/a 80>20000 443>20001", "problem shop/a PortsExhausted [8080]", "problem shop/b PortsExhausted [80]"}},
		{name: "a pod port out of a new range is moved",
			before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{a80},
			opts: func(o *Options) { o.PortRange = [2]int32{30000, 30001} },
			want: []string{"update shop/a 80>30000"}},
		{name: "deleted Gateway deletes its Service",
			before: []*gatewayv1.Gateway{a80, b80}, after: []*gatewayv1.Gateway{a80},
			want: []string{"delete shop/b"}},
		{name: "a freed pod port is not reused while its Service exists",
			before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{b80},
			want: []string{"create shop/b 80>20001", "delete shop/a"}},
		{name: "foreign Services untouched",
			before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{b80},
			edit: func(s []*corev1.Service) []*corev1.Service {
				return append(s,
					foreign("ramjet", "web", nil, nil),
					foreign("ramjet", ServiceName(snapshot.Key{Namespace: "shop", Name: "b"}), ours, nil),
					foreign("other", "x", ours, map[string]string{AnnotationController: "ramjet.dev/gateway"}),
					foreign("ramjet", "y", ours, map[string]string{AnnotationController: "example.com/other"}),
				)
			},
			want: []string{"delete shop/a", "problem shop/b NameTaken"}},
		{name: "type changed", before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{a80},
			opts: func(o *Options) { o.Type = corev1.ServiceTypeClusterIP },
			want: []string{"update shop/a 80>20000"}},
		{name: "selector changed", before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{a80},
			opts: func(o *Options) { o.Selector = map[string]string{"app": "other"} },
			want: []string{"update shop/a 80>20000"}},
		{name: "our label changed by someone", before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{a80},
			edit: func(s []*corev1.Service) []*corev1.Service {
				s[0].Labels[LabelGateway] = "x"
				return s
			},
			want: []string{"update shop/a 80>20000"}},
		{name: "a requested IP address becomes the load balancer IP",
			after: []*gatewayv1.Gateway{withAddresses(a80, "IPAddress=192.0.2.7", "192.0.2.8"), withAddresses(b80, "198.51.100.1")},
			want:  []string{"create shop/a 80>20000 ip=192.0.2.7", "create shop/b 80>20001 ip=198.51.100.1"}},
		{name: "Hostname addresses and values that are no IP are not passed",
			after: []*gatewayv1.Gateway{withAddresses(a80, "Hostname=lb.example.com", "IPAddress=not-an-ip", "2001:db8::1"), withAddresses(b80, "Hostname=lb.example.com")},
			want:  []string{"create shop/a 80>20000 ip=2001:db8::1", "create shop/b 80>20001"}},
		{name: "a changed requested address updates the Service",
			before: []*gatewayv1.Gateway{withAddresses(a80, "192.0.2.7")}, after: []*gatewayv1.Gateway{withAddresses(a80, "192.0.2.9")},
			want: []string{"update shop/a 80>20000 ip=192.0.2.9"}},
		{name: "an address added updates the Service",
			before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{withAddresses(a80, "192.0.2.7")},
			want: []string{"update shop/a 80>20000 ip=192.0.2.7"}},
		{name: "a removed address clears the load balancer IP",
			before: []*gatewayv1.Gateway{withAddresses(a80, "192.0.2.7")}, after: []*gatewayv1.Gateway{a80},
			want: []string{"update shop/a 80>20000"}},
		{name: "a Service that is no LoadBalancer gets no load balancer IP",
			before: []*gatewayv1.Gateway{withAddresses(a80, "192.0.2.7")}, after: []*gatewayv1.Gateway{withAddresses(a80, "192.0.2.7")},
			opts: func(o *Options) { o.Type = corev1.ServiceTypeClusterIP },
			want: []string{"update shop/a 80>20000"}},
		{name: "fields the API server sets and others' metadata are not changes",
			before: []*gatewayv1.Gateway{a80}, after: []*gatewayv1.Gateway{a80},
			edit: func(s []*corev1.Service) []*corev1.Service {
				s[0].Spec.Ports[0].NodePort = 31000
				s[0].Spec.ClusterIP = "10.0.0.1"
				s[0].Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
				s[0].Annotations["metallb.io/ip-allocated-from-pool"] = "pool"
				s[0].Labels["team"] = "net"
				return s
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			existing := applied(nil, Desired(tc.before, nil, opts))
			if tc.edit != nil {
				existing = tc.edit(existing)
			}
			if tc.opts != nil {
				tc.opts(&opts)
			}
			plan := Desired(tc.after, existing, opts)
			if got := summary(plan, existing); !slices.Equal(got, tc.want) {
				t.Errorf("plan:\n got  %q\n want %q", got, tc.want)
			}
			if again := Desired(tc.after, applied(existing, plan), opts); !again.Empty() {
				t.Errorf("planning again after the plan: got %q, want nothing", summary(again, nil))
			}
		})
	}
}

// TestDesiredService checks the Service of one Gateway field by field.
func TestDesiredService(t *testing.T) {
	gw := gateway("shop", "web", 80)
	plan := Desired([]*gatewayv1.Gateway{gw}, nil, testOptions())
	if len(plan.Create) != 1 {
		t.Fatalf("got %d Services to create, want 1", len(plan.Create))
	}
	svc := plan.Create[0]
	wantLabels := map[string]string{
		LabelManagedBy: ManagedBy, LabelGateway: gatewayHash(snapshot.Key{Namespace: "shop", Name: "web"}),
		gatewayv1.GatewayNameLabelKey: "web", gatewayv1.GatewayClassNameLabelKey: "ramjet",
	}
	wantAnnotations := map[string]string{
		AnnotationController: "ramjet.dev/gateway", AnnotationGatewayNamespace: "shop", AnnotationGatewayName: "web",
	}
	wantPorts := []corev1.ServicePort{{Name: "port-80", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(20000)}}
	switch {
	case svc.Namespace != "ramjet" || svc.Name != ServiceName(snapshot.Key{Namespace: "shop", Name: "web"}):
		t.Errorf("got Service %s/%s", svc.Namespace, svc.Name)
	case svc.Spec.Type != corev1.ServiceTypeLoadBalancer:
		t.Errorf("type: got %q, want LoadBalancer", svc.Spec.Type)
	case !maps.Equal(svc.Spec.Selector, testOptions().Selector):
		t.Errorf("selector: got %v", svc.Spec.Selector)
	case !maps.Equal(svc.Labels, wantLabels):
		t.Errorf("labels:\n got  %v\n want %v", svc.Labels, wantLabels)
	case !maps.Equal(svc.Annotations, wantAnnotations):
		t.Errorf("annotations:\n got  %v\n want %v", svc.Annotations, wantAnnotations)
	case !slices.Equal(svc.Spec.Ports, wantPorts):
		t.Errorf("ports:\n got  %v\n want %v", svc.Spec.Ports, wantPorts)
	}
}

// TestDesiredInfrastructure copies spec.infrastructure, refuses reserved
// and invalid keys, and removes a key removed from the Gateway while
// others' keys stay.
func TestDesiredInfrastructure(t *testing.T) {
	gw := gateway("shop", "web", 80)
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{
		Labels: map[gatewayv1.LabelKey]gatewayv1.LabelValue{
			"team": "net", "cost": "a", LabelManagedBy: "helm", "bad key!": "x", "ok": "bad value!",
		},
		Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{
			"service.beta.kubernetes.io/aws-load-balancer-type": "nlb", AnnotationController: "x",
		},
	}
	opts := testOptions()
	plan := Desired([]*gatewayv1.Gateway{gw}, nil, opts)
	svc := plan.Create[0]
	for k, want := range map[string]string{"team": "net", "cost": "a", LabelManagedBy: ManagedBy} {
		if got := svc.Labels[k]; got != want {
			t.Errorf("label %s: got %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"bad key!", "ok"} {
		if _, ok := svc.Labels[k]; ok {
			t.Errorf("label %q copied, want it left out", k)
		}
	}
	if got := svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"]; got != "nlb" {
		t.Errorf("annotation: got %q, want nlb", got)
	}
	if got := svc.Annotations[AnnotationController]; got != "ramjet.dev/gateway" {
		t.Errorf("controller annotation: got %q, want ours", got)
	}
	var messages []string
	for _, p := range plan.Problems {
		if p.Reason != InfrastructureIgnored {
			t.Errorf("problem %s, want only InfrastructureIgnored", p.Reason)
		}
		messages = append(messages, p.Message)
	}
	if want := 4; len(messages) != want {
		t.Errorf("got %d problems %q, want %d", len(messages), messages, want)
	}
	if want := `spec.infrastructure.labels: "bad key!" is not a valid key`; !slices.ContainsFunc(messages, func(m string) bool { return strings.HasPrefix(m, want) }) {
		t.Errorf("problems %q: want one starting %q", messages, want)
	}

	existing := applied(nil, plan)
	existing[0].Annotations["metallb.io/ip-allocated-from-pool"] = "pool"
	existing[0].Labels["added-by-someone"] = "x"
	delete(gw.Spec.Infrastructure.Labels, "cost")
	delete(gw.Spec.Infrastructure.Annotations, "service.beta.kubernetes.io/aws-load-balancer-type")
	plan = Desired([]*gatewayv1.Gateway{gw}, existing, opts)
	if len(plan.Update) != 1 {
		t.Fatalf("got %q, want one update", summary(plan, existing))
	}
	svc = plan.Update[0]
	if _, ok := svc.Labels["cost"]; ok {
		t.Error("label cost kept after the Gateway dropped it")
	}
	if _, ok := svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"]; ok {
		t.Error("annotation kept after the Gateway dropped it")
	}
	if svc.Labels["team"] != "net" || svc.Labels["added-by-someone"] != "x" || svc.Annotations["metallb.io/ip-allocated-from-pool"] != "pool" {
		t.Errorf("got labels %v annotations %v, want team, added-by-someone and the metallb annotation kept", svc.Labels, svc.Annotations)
	}
	if again := Desired([]*gatewayv1.Gateway{gw}, applied(existing, plan), opts); !again.Empty() {
		t.Errorf("planning again: got %q, want nothing", summary(again, nil))
	}
}
