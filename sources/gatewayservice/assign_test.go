package gatewayservice

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestAssignments reads ports and addresses from our Services only.
func TestAssignments(t *testing.T) {
	opts := testOptions()
	svcs := applied(nil, Desired([]*gatewayv1.Gateway{gateway("shop", "lb", 80, 443), gateway("shop", "host", 80), gateway("shop", "pending", 80)}, nil, opts))
	for _, s := range svcs {
		switch s.Annotations[AnnotationGatewayName] {
		case "lb":
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.18.0.10"}, {IP: "198.18.0.10"}, {IP: "2001:db8::1"}}
		case "host":
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}}
		}
	}
	clusterOpts := opts
	clusterOpts.Type = corev1.ServiceTypeClusterIP
	cluster := applied(nil, Desired([]*gatewayv1.Gateway{gateway("shop", "cluster", 8080)}, nil, clusterOpts))[0]
	cluster.Spec.ClusterIP, cluster.Spec.ClusterIPs = "10.96.0.5", []string{"10.96.0.5", "fd00::5"}
	stranger := cluster.DeepCopy()
	stranger.Labels = nil
	renamed := cluster.DeepCopy()
	renamed.Name = "gw-renamed"
	svcs = append(svcs, cluster, stranger, renamed)

	got := map[string]string{}
	for k, a := range Assignments(svcs, opts) {
		got[k.String()] = render(a)
	}
	want := map[string]string{
		"shop/lb":      "80>20001 443>20002 IPAddress=198.18.0.10 IPAddress=2001:db8::1",
		"shop/host":    "80>20000 Hostname=lb.example.com",
		"shop/pending": "80>20003",
		"shop/cluster": "8080>20000 IPAddress=10.96.0.5 IPAddress=fd00::5",
	}
	if !maps.Equal(got, want) {
		t.Errorf("assignments:\n got  %v\n want %v", got, want)
	}
}

func render(a Assignment) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(a.Ports)) {
		parts = append(parts, fmt.Sprintf("%d>%d", p, a.Ports[p]))
	}
	for _, ad := range a.Addresses {
		parts = append(parts, fmt.Sprintf("%s=%s", *ad.Type, ad.Value))
	}
	return strings.Join(parts, " ")
}

// TestServiceName checks that names are DNS-1035 labels of at most 63
// characters, stable, and distinct where the readable part is cut alike.
func TestServiceName(t *testing.T) {
	long := strings.Repeat("a", 63)
	keys := []snapshot.Key{
		{Namespace: "shop", Name: "web"},
		{Namespace: "1shop", Name: "web.example.com"},
		{Namespace: long, Name: strings.Repeat("b.", 120) + "c"},
		{Namespace: long, Name: strings.Repeat("b.", 120) + "d"},
		{Namespace: "shop", Name: "Web_ÜBER--"},
		{Namespace: "shop-web", Name: "x"},
		{Namespace: "shop", Name: "web-x"},
	}
	seen := map[string]snapshot.Key{}
	for _, k := range keys {
		name := ServiceName(k)
		if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
			t.Errorf("%s: %q is not a DNS-1035 label: %v", k, name, msgs)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("%s and %s share the name %q", k, other, name)
		}
		seen[name] = k
		if again := ServiceName(k); again != name {
			t.Errorf("%s: got %q then %q", k, name, again)
		}
	}
	if got, want := ServiceName(keys[0]), "gw-shop-web-"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start %q", got, want)
	}
}

// TestOptionsValidate names the field that is wrong.
func TestOptionsValidate(t *testing.T) {
	if err := testOptions().Validate(); err != nil {
		t.Errorf("test options: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(*Options)
	}{
		{"namespace", "namespace:", func(o *Options) { o.Namespace = "" }},
		{"selector", "selector:", func(o *Options) { o.Selector = nil }},
		{"selector value", "selector:", func(o *Options) { o.Selector = map[string]string{"app": "a b"} }},
		{"type", "type:", func(o *Options) { o.Type = corev1.ServiceTypeExternalName }},
		{"range", "port range 20-10:", func(o *Options) { o.PortRange = [2]int32{20, 10} }},
		{"controller", "controller name:", func(o *Options) { o.ControllerName = "" }},
	} {
		o := testOptions()
		tc.edit(&o)
		if err := o.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error starting %q", tc.name, err, tc.want)
		}
	}
}
