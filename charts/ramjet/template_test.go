package ramjet_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/test/golden"
)

// configurations are the chart's tested configurations: testdata/NAME.values.yaml
// rendered must equal testdata/NAME.yaml (rewritten by -update). The
// install tests install each of them into a real API server.
var configurations = []string{"default", "daemonset", "watchnamespace", "hpa", "pdb", "gateway", "gatewayonly", "gatewayshared"}

// renderOnly are configurations checked by helm template alone: they need
// CRDs the test API server does not have (the prometheus-operator's).
var renderOnly = []string{"options"}

func valuesFile(name string) string { return filepath.Join("testdata", name+".values.yaml") }

func TestLint(t *testing.T) {
	for _, name := range append(append([]string{}, configurations...), renderOnly...) {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, "lint", ".", "--strict", "--kube-version", kubeVersion, "--namespace", namespace, "--values", valuesFile(name))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

func TestTemplateGolden(t *testing.T) {
	for _, name := range append(append([]string{}, configurations...), renderOnly...) {
		t.Run(name, func(t *testing.T) {
			got, err := render(t, []string{valuesFile(name)})
			if err != nil {
				t.Fatal(err)
			}
			got = withoutDashboard(t, got)
			path := filepath.Join("testdata", name+".yaml")
			if golden.Update() {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("helm template with %s differs from %s (review the diff of -update):\n%s", valuesFile(name), path, firstDifference(string(want), got))
			}
		})
	}
}

// dashboardLine is the start of the dashboard ConfigMap's data line.
const dashboardLine = "  ramjet.json: "

// withoutDashboard checks that the dashboard ConfigMap, when rendered,
// holds exactly dashboards/ramjet.json, and puts the file's name in its
// place: the golden manifests do not change with each panel (the
// dashboard's own test keeps it true).
func withoutDashboard(t *testing.T, manifest string) string {
	t.Helper()
	lines := strings.Split(manifest, "\n")
	for i, line := range lines {
		value, ok := strings.CutPrefix(line, dashboardLine)
		if !ok {
			continue
		}
		file, err := os.ReadFile(filepath.Join("dashboards", "ramjet.json"))
		if err != nil {
			t.Fatal(err)
		}
		var data string
		if err := json.Unmarshal([]byte(value), &data); err != nil || data != string(file) {
			t.Errorf("the dashboard ConfigMap does not hold dashboards/ramjet.json as it is (%v)", err)
		}
		lines[i] = dashboardLine + "(dashboards/ramjet.json)"
	}
	return strings.Join(lines, "\n")
}

// firstDifference shows the lines around the first line where got differs
// from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			from := max(0, i-3)
			return "want:\n" + strings.Join(w[from:min(len(w), i+4)], "\n") + "\ngot:\n" + strings.Join(g[from:min(len(g), i+4)], "\n")
		}
	}
	return ""
}

// TestRefusals: values that make no sense, alone or together, are refused
// before anything reaches the cluster, with a message that names them.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want string
	}{
		{"unknown key", []string{"replicas=2"}, "replicas"},
		{"unknown nested key", []string{"ingressController.service.typ=NodePort"}, "typ"},
		{"wrong type", []string{"ingressController.watchIngressWithoutClass=yes"}, "watchIngressWithoutClass"},
		{"bad enum", []string{"ingressController.kind=StatefulSet"}, "kind"},
		{"unknown server key", []string{"server.limits.max_body=1m"}, "max_body"},
		{"wrong server type", []string{"server.access_log=loud"}, "access_log"},
		{"bad server duration", []string{"server.limits.idle_timeout=soon"}, "idle_timeout"},
		{"daemonset with hpa", []string{"ingressController.kind=DaemonSet", "autoscaling.enabled=true"}, "autoscaling.enabled needs ingressController.kind: Deployment"},
		{"hpa min above max", []string{"autoscaling.enabled=true", "autoscaling.minReplicas=5", "autoscaling.maxReplicas=3"}, "autoscaling.minReplicas (5) is above autoscaling.maxReplicas (3)"},
		{"hpa without target", []string{"autoscaling.enabled=true", "autoscaling.targetCPUUtilizationPercentage=0"}, "targetCPUUtilizationPercentage or"},
		{"watchNamespace no name", []string{"ingressController.watchNamespace=Team_A"}, "/ingressController/watchNamespace"},
		{"pdb blocks evictions", []string{"podDisruptionBudget.enabled=true"}, "podDisruptionBudget.minAvailable (1) with replicaCount 1"},
		{"pdb blocks evictions at hpa minimum", []string{"podDisruptionBudget.enabled=true", "podDisruptionBudget.minAvailable=2", "autoscaling.enabled=true"}, "autoscaling.minReplicas 2"},
		{"pdb both", []string{"podDisruptionBudget.enabled=true", "podDisruptionBudget.minAvailable=2", "podDisruptionBudget.maxUnavailable=1", "replicaCount=3"}, "not both"},
		{"load balancer settings on ClusterIP", []string{"ingressController.service.type=ClusterIP", "ingressController.service.loadBalancerClass=x"}, "ingressController.service.loadBalancerClass needs ingressController.service.type: LoadBalancer"},
		{"node ports on ClusterIP", []string{"ingressController.service.type=ClusterIP", "ingressController.service.nodePorts.http=30080"}, "nodePorts need"},
		{"traffic policy on ClusterIP", []string{"ingressController.service.type=ClusterIP", "ingressController.service.externalTrafficPolicy=Local"}, "externalTrafficPolicy needs"},
		{"server listeners", []string{"server.listeners.http.address=:80"}, "server.listeners is set by the chart"},
		{"server admin socket", []string{"server.admin.socket=/tmp/a.sock"}, "server.admin.socket is set by the chart"},
		{"two memcached", []string{"server.memcached.addresses[0]=m:11211", "ingressController.globalRateLimit.memcachedHost=n"}, "set one"},
		{"global rate limit status", []string{"ingressController.globalRateLimit.statusCode=200"}, "statusCode"},
		{"global rate limit timeout", []string{"ingressController.globalRateLimit.connectTimeout=soon"}, "connectTimeout"},
		{"mode off", []string{"ingressController.enabled=false"}, "ingressController.enabled: false"},
		{"nothing to serve", []string{"ingressController.ingress.enabled=false"}, "ingressController.ingress.enabled: false with ingressController.gatewayAPI.enabled: false serves nothing"},
		{"gateway listeners without the gateway api", []string{"ingressController.gatewayAPI.listeners.80=http"}, "ingressController.gatewayAPI.listeners needs ingressController.gatewayAPI.enabled: true"},
		{"gateway listener of no ramjetd listener", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.listeners.80=web"}, "listeners"},
		{"gateway listener port not a port", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.listeners.70000=http"}, "ingressController.gatewayAPI.listeners.70000: a port is 1 to 65535"},
		{"gateway listener port zero", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.listeners.0=http"}, "listeners"},
		{"port range not a range", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.portRange=20000"}, "portRange"},
		{"port range reversed", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.portRange=20999-20000"}, "ingressController.gatewayAPI.portRange 20999-20000: want FIRST-LAST with 1024 <= FIRST <= LAST <= 65535"},
		{"port range privileged", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.portRange=80-2000"}, "1024 <= FIRST"},
		{"port range above 65535", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.portRange=65000-70000"}, "LAST <= 65535"},
		{"port range over the metrics ports", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.portRange=10000-10999"}, "ingressController.gatewayAPI.portRange 10000-10999 holds ramjetd's health port 10255"},
		{"port range over a listener", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.portRange=8000-8100"}, "holds ingressController.containerPort.http 8080"},
		{"gateway service type", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.service.type=External"}, "type"},
		{"gateway controller name", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.controllerName=ramjet"}, "controllerName"},
		{"gateway class name", []string{"ingressController.gatewayAPI.enabled=true", "ingressController.gatewayAPI.gatewayClass.name=Ramjet"}, "name"},
		{"gateway extra arg the chart sets", []string{"ingressController.extraArgs.gateway-port-range=1-2"}, "ingressController.extraArgs.gateway-port-range: the chart sets --gateway-port-range"},
		{"publish service of gateway-only own mode", []string{"ingressController.ingress.enabled=false", "ingressController.gatewayAPI.enabled=true", "ingressController.publishService=a/b"}, "each Gateway's address is its own Service's"},
		{"http3", []string{"ingressController.http3=true"}, "ingressController.http3"},
		{"pdb of a daemonset with maxUnavailable", []string{"ingressController.kind=DaemonSet", "podDisruptionBudget.enabled=true", "podDisruptionBudget.maxUnavailable=1"}, "a DaemonSet has no scale"},
		{"extra arg the chart sets", []string{"ingressController.extraArgs.watch-namespace=other"}, "ingressController.extraArgs.watch-namespace: the chart sets --watch-namespace"},
		{"extra arg number", []string{"ingressController.extraArgs.resync=30"}, "resync"},
		{"pod label of the selector", []string{"podLabels.app\\.kubernetes\\.io/component=web"}, "podLabels.app.kubernetes.io/component is a label the chart sets"},
		{"service label of the chart", []string{"ingressController.service.labels.app\\.kubernetes\\.io/name=x"}, "ingressController.service.labels.app.kubernetes.io/name is a label the chart sets"},
		{"port clash", []string{"ingressController.containerPort.https=8080"}, "ingressController.containerPort.http and ingressController.containerPort.https are both port 8080"},
		{"port clash with metrics", []string{"ingressController.containerPort.http=10254"}, "port 10254"},
		{"default service account", []string{"serviceAccount.create=false"}, "serviceAccount.create: false needs serviceAccount.name"},
		{"default backend outside watchNamespace", []string{"ingressController.watchNamespace=team-a", "ingressController.defaultBackend=other/fallback:80"}, "is outside ingressController.watchNamespace team-a"},
		{"publish service and address", []string{"ingressController.publishService=a/b", "ingressController.publishAddress={192.0.2.1}"}, "give one of them"},
		{"publish without status", []string{"ingressController.updateStatus=false", "ingressController.publishService=a/b"}, "nothing would use it"},
		{"injected image tag", []string{"image.tag=1.0\n  stdin: true"}, "tag"},
		{"injected service account", []string{"serviceAccount.create=false", "serviceAccount.name=sa\n  hostNetwork: true"}, "name"},
		{"injected namespace", []string{"metrics.serviceMonitor.namespace=x\n  annotations: {}"}, "namespace"},
		{"resources typo", []string{"resources.request.cpu=1"}, "request"},
		{"service monitor without service", []string{"metrics.serviceMonitor.enabled=true", "metrics.service.enabled=false"}, "metrics.serviceMonitor.enabled needs metrics.service.enabled"},
		{"status without a publish service", []string{"ingressController.service.enabled=false"}, "ingressController.updateStatus needs an address for the status"},
		{"extra flag name", []string{"ingressController.extraArgs.Bad_Flag=1"}, "Bad_Flag"},
		{"bad digest", []string{"image.digest=latest"}, "digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var flags []string
			for _, s := range tc.set {
				flags = append(flags, "--set", s)
			}
			out, err := render(t, nil, flags...)
			if err == nil {
				t.Fatalf("helm template --set %v succeeded, want a refusal naming %q; it rendered:\n%.400s", tc.set, tc.want, out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template --set %v: got %v\nwant a message containing %q", tc.set, err, tc.want)
			}
		})
	}
}
