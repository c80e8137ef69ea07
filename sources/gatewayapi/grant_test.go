package gatewayapi

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestPermits(t *testing.T) {
	name := gatewayv1.ObjectName("web")
	g := indexGrants([]*gatewayv1.ReferenceGrant{
		{
			ObjectMeta: objectMeta("app", "named"),
			Spec: gatewayv1.ReferenceGrantSpec{
				From: []gatewayv1.ReferenceGrantFrom{{Group: groupGateway, Kind: kindHTTPRoute, Namespace: "infra"}},
				To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service", Name: &name}},
			},
		},
		{
			ObjectMeta: objectMeta("certs", "all"),
			Spec: gatewayv1.ReferenceGrantSpec{
				From: []gatewayv1.ReferenceGrantFrom{{Group: groupGateway, Kind: kindGateway, Namespace: "infra"}},
				To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Secret"}},
			},
		},
	})
	route := object{Group: groupGateway, Kind: kindHTTPRoute, Namespace: "infra"}
	for _, tc := range []struct {
		name     string
		from, to object
		want     bool
	}{
		{"same namespace needs no grant", route, object{Kind: "Service", Namespace: "infra", Name: "any"}, true},
		{"the named Service", route, object{Kind: "Service", Namespace: "app", Name: "web"}, true},
		{"another Service", route, object{Kind: "Service", Namespace: "app", Name: "other"}, false},
		{"another route kind", object{Group: groupGateway, Kind: kindGRPCRoute, Namespace: "infra"}, object{Kind: "Service", Namespace: "app", Name: "web"}, false},
		{"another namespace", object{Group: groupGateway, Kind: kindHTTPRoute, Namespace: "other"}, object{Kind: "Service", Namespace: "app", Name: "web"}, false},
		{"a grant lives in the target's namespace", route, object{Kind: "Service", Namespace: "certs", Name: "web"}, false},
		{"every Secret", object{Group: groupGateway, Kind: kindGateway, Namespace: "infra"}, object{Kind: "Secret", Namespace: "certs", Name: "any"}, true},
		{"not another kind", object{Group: groupGateway, Kind: kindGateway, Namespace: "infra"}, object{Kind: "ConfigMap", Namespace: "certs", Name: "any"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := g.permits(tc.from, tc.to); got != tc.want {
				t.Errorf("permits(%v, %v) = %v, want %v", tc.from, tc.to, got, tc.want)
			}
		})
	}
}

func objectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
