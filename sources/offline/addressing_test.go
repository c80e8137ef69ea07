package offline

import (
	"fmt"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/gatewayservice"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestPlannedServices: offline, a Gateway of the own-address mode is
// served on its Service's pod port when the manifests hold its Service,
// else on the pod port the leader would allocate; a Gateway that is not
// accepted gets none, nor does any Gateway get an address.
func TestPlannedServices(t *testing.T) {
	old := snapshot.Key{Namespace: "shop", Name: "old"}
	manifests := `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ramjet}
spec: {controllerName: ramjet.dev/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: old, namespace: shop}
spec: {gatewayClassName: ramjet, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: new, namespace: shop}
spec: {gatewayClassName: ramjet, listeners: [{name: http, port: 80, protocol: HTTP}, {name: alt, port: 8080, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: invalid, namespace: shop}
spec: {gatewayClassName: ramjet, listeners: [{name: tcp, port: 81, protocol: TCP}]}
---
apiVersion: v1
kind: Service
metadata:
  name: ` + gatewayservice.ServiceName(old) + `
  namespace: ramjet
  labels: {app.kubernetes.io/managed-by: ramjet}
  annotations: {gateway.ramjet.dev/controller: ramjet.dev/gateway, gateway.ramjet.dev/gateway-namespace: shop, gateway.ramjet.dev/gateway-name: old}
spec: {type: LoadBalancer, ports: [{port: 80, targetPort: 20000}]}
`
	snap, _, err := Read([]string{"-"}, strings.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	services := len(snap.Services)
	p := &PlannedServices{
		Services: gatewayservice.Options{Namespace: "ramjet", Selector: map[string]string{"app": "ramjet"}, ControllerName: gatewayapi.DefaultControllerName},
	}
	got := p.Assign(snap)
	want := map[string]string{"shop/old": "80=:20000", "shop/new": "80=:20001 8080=:20002"}
	for key, a := range got {
		if len(a.Addresses) > 0 {
			t.Errorf("Gateway %s has addresses %v, want none", key, a.Addresses)
		}
		if ports := portList(a.Ports); ports != want[key.String()] {
			t.Errorf("Gateway %s: ports %q, want %q", key, ports, want[key.String()])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d Gateways assigned, want %d: %v", len(got), len(want), got)
	}
	if len(snap.Services) != services {
		t.Errorf("the snapshot has %d Services, want the %d it had", len(snap.Services), services)
	}
}

// portList renders the ports of an assignment in port order.
func portList(ports map[gatewayv1.PortNumber]gatewayapi.PortAssignment) string {
	var out []string
	for _, port := range []gatewayv1.PortNumber{80, 8080} {
		if pa, ok := ports[port]; ok {
			out = append(out, fmt.Sprintf("%d=%s", port, pa.Address))
		}
	}
	return strings.Join(out, " ")
}
