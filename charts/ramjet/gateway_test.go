package ramjet_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// selectorFlag is the --gateway-service-selector the chart passes for the
// release "ingress": the pods' selector labels.
const selectorFlag = "--gateway-service-selector=app.kubernetes.io/component=controller,app.kubernetes.io/instance=ingress,app.kubernetes.io/name=ramjet"

// gatewayCase is one install mode: what its controller must be told, which
// permissions it must have and which it must not, and the classes made.
type gatewayCase struct {
	name         string
	values       []string
	set          []string
	args         []string // flags that must be passed
	noArgs       []string // prefixes of flags that must not be
	perms        []string // permissions that must be granted
	noPerms      []string // substrings no permission may contain
	ingressClass bool
	gatewayClass string // "NAME CONTROLLER", or empty for none
	service      bool   // the release's Service
}

var gatewayCases = []gatewayCase{
	{
		name:         "ingress only",
		values:       []string{valuesFile("default")},
		args:         []string{"--ingress=true", "--gateway-api=false"},
		noArgs:       []string{"--gateway-controller-name", "--gateway-listener", "--gateway-port-range", "--gateway-service-"},
		perms:        []string{"cluster networking.k8s.io ingresses watch", "cluster networking.k8s.io ingresses/status patch"},
		noPerms:      []string{"gateway.networking.k8s.io", " namespaces ", " services create", " services delete"},
		ingressClass: true,
		service:      true,
	},
	{
		name:   "both inputs, own address",
		values: []string{valuesFile("gateway")},
		args: []string{"--ingress=true", "--gateway-api=true", "--gateway-controller-name=ramjet.dev/gateway",
			"--gateway-service-type=LoadBalancer", "--gateway-port-range=20000-20099", "--gateway-service-namespace=ingress", selectorFlag,
			"--publish-service=ingress/ingress-ramjet"},
		noArgs: []string{"--gateway-listener"},
		perms: append(gatewayPerms("cluster"),
			"cluster networking.k8s.io ingresses watch", "cluster networking.k8s.io ingressclasses watch",
			"ingress  services create", "ingress  services update", "ingress  services patch", "ingress  services delete"),
		noPerms:      []string{"ingress  services get", "ingress  services list"},
		ingressClass: true,
		gatewayClass: "ramjet ramjet.dev/gateway",
		service:      true,
	},
	{
		name:   "gateway only, own address",
		values: []string{valuesFile("gatewayonly")},
		args: []string{"--ingress=false", "--gateway-api=true", "--gateway-controller-name=example.com/edge",
			"--gateway-service-type=NodePort", "--gateway-port-range=20000-20999", "--gateway-service-namespace=ingress", selectorFlag},
		noArgs:       []string{"--gateway-listener", "--publish-"},
		perms:        append(gatewayPerms("cluster"), "ingress  services create", "ingress  services delete"),
		noPerms:      []string{" ingresses", " ingressclasses", "services/ingress-ramjet"},
		gatewayClass: "edge example.com/edge",
	},
	{
		name:   "both inputs, shared",
		values: []string{valuesFile("gatewayshared")},
		args: []string{"--ingress=true", "--gateway-api=true", "--gateway-controller-name=ramjet.dev/gateway",
			"--gateway-listener=443=https", "--gateway-listener=80=http", "--publish-service=ingress/ingress-ramjet"},
		noArgs:       []string{"--gateway-port-range", "--gateway-service-"},
		perms:        append(gatewayPerms("cluster"), "cluster networking.k8s.io ingresses watch", "ingress  services/ingress-ramjet get"),
		noPerms:      []string{" services create", " services update", " services patch", " services delete"},
		ingressClass: true,
		service:      true,
	},
	{
		name:   "gateway only, shared",
		set:    []string{"ingressController.ingress.enabled=false", "ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.listeners.8080=http"},
		args:   []string{"--ingress=false", "--gateway-listener=8080=http", "--publish-service=ingress/ingress-ramjet"},
		noArgs: []string{"--gateway-port-range", "--gateway-service-"},
		perms:  append(gatewayPerms("cluster"), "ingress  services/ingress-ramjet get"),
		noPerms: []string{" ingresses", " ingressclasses", " services create", " services update", " services patch",
			" services delete"},
		gatewayClass: "ramjet ramjet.dev/gateway",
		service:      true,
	},
	{
		name:   "own address, one watched namespace",
		values: []string{valuesFile("watchnamespace"), valuesFile("gateway")},
		args:   []string{"--gateway-service-namespace=ingress", selectorFlag},
		perms: append(gatewayPerms("team-a"),
			"cluster gateway.networking.k8s.io gatewayclasses watch", "cluster  namespaces list",
			"ingress  services get", "ingress  services list", "ingress  services watch", "ingress  services create"),
		noPerms:      []string{"cluster gateway.networking.k8s.io gateways", "cluster gateway.networking.k8s.io httproutes"},
		ingressClass: true,
		gatewayClass: "ramjet ramjet.dev/gateway",
		service:      true,
	},
}

// gatewayPerms are the Gateway API permissions of a namespaced scope
// ("cluster" or a watched namespace), with the cluster-scoped ones.
func gatewayPerms(scope string) []string {
	g := " gateway.networking.k8s.io "
	out := []string{"cluster" + g + "gatewayclasses get", "cluster" + g + "gatewayclasses list", "cluster" + g + "gatewayclasses watch",
		"cluster" + g + "gatewayclasses/status update", "cluster" + g + "gatewayclasses/status patch",
		"cluster  namespaces get", "cluster  namespaces list", "cluster  namespaces watch"}
	for _, r := range []string{"gateways", "httproutes", "grpcroutes", "referencegrants", "backendtlspolicies"} {
		out = append(out, scope+g+r+" get", scope+g+r+" list", scope+g+r+" watch")
	}
	for _, r := range []string{"gateways", "httproutes", "grpcroutes", "backendtlspolicies"} {
		out = append(out, scope+g+r+"/status get", scope+g+r+"/status update", scope+g+r+"/status patch")
	}
	return out
}

// TestGatewayModes renders each install mode and checks the controller's
// flags, the RBAC (granted and absent) and the classes and Service made.
func TestGatewayModes(t *testing.T) {
	for _, tc := range gatewayCases {
		t.Run(tc.name, func(t *testing.T) {
			var flags []string
			for _, s := range tc.set {
				flags = append(flags, "--set", s)
			}
			out, err := render(t, tc.values, flags...)
			if err != nil {
				t.Fatal(err)
			}
			objs := objects(t, out)
			checkArgs(t, tc, controllerArgs(t, objs))
			checkPermissions(t, tc, permissions(objs))
			checkClasses(t, tc, objs)
			checkSelector(t, objs)
		})
	}
}

func checkArgs(t *testing.T, tc gatewayCase, args []string) {
	t.Helper()
	for _, want := range tc.args {
		if !slices.Contains(args, want) {
			t.Errorf("the controller is not passed %s; its flags: %q", want, args)
		}
	}
	for _, arg := range args {
		for _, prefix := range tc.noArgs {
			if strings.HasPrefix(arg, prefix) {
				t.Errorf("the controller is passed %s, want no %s... in this mode", arg, prefix)
			}
		}
	}
}

func checkPermissions(t *testing.T, tc gatewayCase, perms []string) {
	t.Helper()
	for _, want := range tc.perms {
		if !slices.Contains(perms, want) {
			t.Errorf("permission %q is not granted", want)
		}
	}
	for _, p := range perms {
		if strings.Contains(p, "*") {
			t.Errorf("permission %q has a wildcard", p)
		}
		for _, bad := range tc.noPerms {
			if strings.Contains(p, bad) {
				t.Errorf("permission %q is granted, want none with %q in this mode", p, bad)
			}
		}
	}
}

func checkClasses(t *testing.T, tc gatewayCase, objs []object) {
	t.Helper()
	if got := len(ofKind(objs, "IngressClass")) == 1; got != tc.ingressClass {
		t.Errorf("IngressClass rendered: %t, want %t", got, tc.ingressClass)
	}
	var classes []string
	for _, o := range ofKind(objs, "GatewayClass") {
		classes = append(classes, o.Metadata.Name+" "+o.Spec.ControllerName)
	}
	if want := slices.DeleteFunc([]string{tc.gatewayClass}, func(s string) bool { return s == "" }); !slices.Equal(classes, want) {
		t.Errorf("GatewayClasses %q, want %q", classes, want)
	}
	var services []string
	for _, o := range ofKind(objs, "Service") {
		services = append(services, o.Metadata.Name)
	}
	if got := slices.Contains(services, release+"-ramjet"); got != tc.service {
		t.Errorf("the release's Service rendered: %t, want %t (Services %q)", got, tc.service, services)
	}
}

// checkSelector: the selector the Gateways' Services get is the
// workload's.
func checkSelector(t *testing.T, objs []object) {
	t.Helper()
	for _, arg := range controllerArgs(t, objs) {
		value, ok := strings.CutPrefix(arg, "--gateway-service-selector=")
		if !ok {
			continue
		}
		got := map[string]string{}
		for _, pair := range strings.Split(value, ",") {
			k, v, _ := strings.Cut(pair, "=")
			got[k] = v
		}
		for _, o := range objs {
			if o.Kind == "Deployment" && !maps.Equal(got, o.Spec.Selector.MatchLabels) {
				t.Errorf("--gateway-service-selector %v, want the Deployment's selector %v", got, o.Spec.Selector.MatchLabels)
			}
		}
	}
}
