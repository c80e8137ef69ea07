package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const manifest = `
apiVersion: v1
kind: List
items:
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: web, namespace: shop}
    spec:
      ingressClassName: nginx
      rules:
        - host: shop.example.com
          http:
            paths:
              - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata:
      name: admin
      namespace: shop
      annotations: {nginx.ingress.kubernetes.io/configuration-snippet: "deny all;"}
    spec:
      ingressClassName: nginx
      rules:
        - host: admin.example.com
          http:
            paths:
              - {path: /, pathType: Prefix, backend: {service: {name: admin, port: {number: 80}}}}
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: legacy, namespace: shop, annotations: {kubernetes.io/ingress.class: nginx}}
spec:
  rules:
    - host: old.example.com
      http:
        paths:
          - path: /
            backend: {serviceName: web, servicePort: 80}
`

// httpsManifest is an Ingress of the class ramjet whose backend is reached
// over HTTPS, with no proxy-ssl-secret, and its Service's endpoints.
const httpsManifest = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: argocd
  namespace: argocd
  annotations: {nginx.ingress.kubernetes.io/backend-protocol: HTTPS}
spec:
  ingressClassName: ramjet
  rules:
    - host: argocd.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: argocd-server, port: {number: 443}}}}
---
apiVersion: v1
kind: Service
metadata: {name: argocd-server, namespace: argocd}
spec: {ports: [{port: 443, targetPort: 8080}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: argocd-server-1, namespace: argocd, labels: {kubernetes.io/service-name: argocd-server}}
addressType: IPv4
ports: [{port: 8080}]
endpoints:
  - addresses: [10.1.0.1]
`

// gatewayManifest is a GatewayClass of ours, a Gateway and an HTTPRoute.
const gatewayManifest = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ramjet}
spec: {controllerName: ramjet.dev/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: shop}
spec:
  gatewayClassName: ramjet
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: gw}]
  hostnames: [shop.example.com]
  rules: [{matches: [{path: {type: PathPrefix, value: /shop}}], backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80}]}
`

func TestTranslateCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ramjet-ingress")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(stdin string, args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	t.Run("text report from stdin", func(t *testing.T) {
		out, code := run(manifest, "translate", "-f", "-", "--assume-class", "nginx")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		for _, want := range []string{
			"h_shop_example_com", "Ingress shop/admin", "NOT SERVED", "UnsupportedAccessControl",
			"3 objects: 2 served, 1 not served", "which Kubernetes no longer serves",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("the Gateway API alone, on a shared listener", func(t *testing.T) {
		out, code := run(gatewayManifest, "translate", "-f", "-", "--ingress=false", "--gateway-api", "--gateway-listener", "80=http")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		for _, want := range []string{"s_http_shop_example_com", "prefix: /shop", "p_shop_web_80", "HTTPRoute shop/web"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if out, code := run(gatewayManifest, "translate", "-f", "-", "--gateway-api", "--gateway-listener", "80=nope"); code == 0 || !strings.Contains(out, `no listener "nope"`) {
			t.Errorf("a --gateway-listener naming no base listener: exit %d:\n%s", code, out)
		}
	})
	t.Run("--check fails on a Gateway API condition", func(t *testing.T) {
		args := []string{"translate", "-f", "-", "--ingress=false", "--gateway-api", "--gateway-listener", "80=http", "--check"}
		if out, code := run(gatewayManifest, args...); code != 0 || strings.Contains(out, "Gateway API conditions") {
			t.Errorf("a route attached, its Gateway without an address: exit %d, want 0 without conditions:\n%s", code, out)
		}
		own := []string{"translate", "-f", "-", "--ingress=false", "--gateway-api", "--check",
			"--gateway-service-namespace", "ramjet", "--gateway-service-selector", "app=ramjet"}
		if out, code := run(gatewayManifest, own...); code != 0 || !strings.Contains(out, "address: :20000") || !strings.Contains(out, "HTTPRoute shop/web  served") {
			t.Errorf("own-address mode: exit %d, want 0 with the Gateway's listener planned at :20000 and the route served:\n%s", code, out)
		}
		missing := strings.Replace(gatewayManifest, "backendRefs: [{name: web, port: 80}]", "backendRefs: [{name: gone, port: 80}]", 1)
		out, code := run(missing, args...)
		if code != 1 {
			t.Errorf("a route whose backend is missing: exit %d, want 1:\n%s", code, out)
		}
		for _, want := range []string{"Gateway API conditions (--check fails):", "HTTPRoute shop/web", "ResolvedRefs=False", "BackendNotFound"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		out, _ = run(missing, append(args, "-o", "json")...)
		var report struct {
			GatewayConditions []struct{ Kind, Type, Status, Reason string }
		}
		if err := json.Unmarshal([]byte(out), &report); err != nil || len(report.GatewayConditions) != 1 || report.GatewayConditions[0].Reason != "BackendNotFound" {
			t.Errorf("json gatewayConditions = %+v (%v), want the one BackendNotFound:\n%s", report.GatewayConditions, err, out)
		}
	})
	t.Run("ingress-nginx's ConfigMap", func(t *testing.T) {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ingress-nginx-controller}\ndata: {proxy-body-size: 8m, use-gzip: \"true\"}\n"
		out, code := run(cm, "translate", "--nginx-configmap", "-")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		for _, want := range []string{"max_request_body_bytes: 8MiB", "#   use-gzip: ramjetd does not compress"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if out, code := run(cm, "translate", "--nginx-configmap", "-", "-f", "-"); code == 0 || !strings.Contains(out, "one at a time") {
			t.Errorf("--nginx-configmap with -f: exit %d:\n%s", code, out)
		}
		if out, code := run("kind: Service\n", "translate", "--nginx-configmap", "-"); code == 0 || !strings.Contains(out, "holds no ConfigMap") {
			t.Errorf("no ConfigMap: exit %d:\n%s", code, out)
		}
	})
	t.Run("json and --check", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.yaml")
		os.WriteFile(path, []byte(manifest), 0o600)
		out, code := run("", "translate", "-f", path, "--assume-class", "nginx", "-o", "json", "--check")
		if code != 1 {
			t.Errorf("--check exit %d, want 1 (an Ingress is not served)", code)
		}
		var report struct {
			Objects []struct{ Name, State string }
		}
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if len(report.Objects) != 3 {
			t.Errorf("%d objects, want 3", len(report.Objects))
		}
	})
	t.Run("--backend-tls-verify reaches the offline translation and --check", func(t *testing.T) {
		// An HTTPS backend without proxy-ssl-secret, as 23 of 259 real
		// Ingresses: verified by default, which fails for a pod (BackendTLS,
		// --check exits 1); annotated follows ingress-nginx and does not
		// verify it (--check passes).
		out, code := run(httpsManifest, "translate", "-f", "-", "--check")
		if code != 1 || !strings.Contains(out, "BackendTLS") {
			t.Errorf("default (always): exit %d, want 1 with a BackendTLS finding:\n%s", code, out)
		}
		out, code = run(httpsManifest, "translate", "-f", "-", "--check", "--backend-tls-verify=annotated")
		if code != 0 || strings.Contains(out, "BackendTLS") || !strings.Contains(out, "insecure_skip_verify: true") {
			t.Errorf("annotated: exit %d, want 0, no BackendTLS finding and an unverified pool:\n%s", code, out)
		}
	})
	t.Run("without the assumed class nothing is ours", func(t *testing.T) {
		out, code := run(manifest, "translate", "-f", "-", "--check")
		if code != 0 || !strings.Contains(out, "0 objects") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("--check fails on an object that does not decode", func(t *testing.T) {
		undecodable := "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: shop\n" +
			"  annotations: {nginx.ingress.kubernetes.io/proxy-read-timeout: 3600}\nspec: {ingressClassName: nginx}\n"
		out, code := run(undecodable, "translate", "-f", "-", "--assume-class", "nginx", "--check")
		if code != 1 {
			t.Errorf("--check exit %d, want 1 (the only Ingress could not be read)", code)
		}
		for _, want := range []string{
			"Documents that could not be read (not translated; --check fails):",
			`stdin document 1: Ingress shop/web does not decode: metadata.annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]: a number, where Kubernetes wants a string (quote the value)`,
			"0 objects: 0 served, 0 not served; 1 document could not be read.",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if out, code := run(undecodable, "translate", "-f", "-", "--assume-class", "nginx"); code != 0 {
			t.Errorf("without --check: exit %d, want 0:\n%s", code, out)
		}
	})
	t.Run("bad flags", func(t *testing.T) {
		for _, args := range [][]string{
			{"translate", "-f", "-", "--annotations", "nope"},
			{"translate", "-f", "-", "--default-backend", "nonamespace"},
			{"translate", "-f", "-", "--ingress=false"},
			{"translate", "-f", "-", "--backend-tls-verify", "sometimes"},
			{"translate"},
			{"frobnicate"},
		} {
			out, code := run("", args...)
			if code != 2 || !strings.Contains(out, "ramjet-ingress:") {
				t.Errorf("%v: exit %d, want 2 with a reason:\n%s", args, code, out)
			}
		}
	})
	t.Run("run refuses bad flags at start, naming them", func(t *testing.T) {
		dir := t.TempDir()
		base := filepath.Join(dir, "base.yaml")
		os.WriteFile(base, []byte("server:\n  listeners:\n    http: {address: \"127.0.0.1:0\"}\n    https: {address: \"127.0.0.1:0\", tls: {}}\n"), 0o600)
		required := []string{"run", "--base", base, "--out", dir, "--admin-socket", filepath.Join(dir, "s")}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"run"}, "--base is required"},
			{[]string{"run", "--base", base}, "--out is required"},
			{[]string{"run", "--base", base, "--out", dir}, "--admin-socket is required"},
			{required, "needs --publish-service or --publish-address"},
			{append(required, "--no-status-update", "--debounce", "-1s"), "--debounce must be 0 or more"},
			{append(required, "--no-status-update", "--annotations", "nope"), `"nope" is not a family`},
			{append(required, "--no-status-update", "--default-backend", "x"), `--default-backend "x": want namespace/name:port`},
			{append(required, "--publish-address", "not an address!"), `--publish-address: "not an address!" is neither an IP address nor a host name`},
			{append(required, "--publish-service", "noslash"), `--publish-service "noslash": want namespace/name`},
			{append(required, "--no-status-update", "--kubeconfig", filepath.Join(dir, "missing")), "connecting to the API server"},
			{append(required, "--no-status-update", "--log-level", "loud"), `--log-level "loud"`},
			{append(required, "--no-status-update", "--backend-tls-verify", "never"), `--backend-tls-verify "never": want always or annotated`},
			{append(required, "--no-status-update", "--global-auth-url", "https://auth.test/check?u=$uri"), `--global-auth-url: "https://auth.test/check?u=$uri" holds the variable $uri, which is not interpolated`},
			{append(required, "--no-status-update", "--global-auth-url", "http://127.0.0.1:4180/"), `--global-auth-url: 127.0.0.1 is a loopback address`},
		} {
			out, code := run("", tc.args...)
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Errorf("%v: exit %d, want 2 with %q:\n%s", tc.args[1:], code, tc.want, out)
			}
		}
	})
	t.Run("bootstrap writes a configuration that 404s", func(t *testing.T) {
		dir := t.TempDir()
		base := filepath.Join(dir, "base.yaml")
		os.WriteFile(base, []byte("server:\n  listeners:\n    http: {address: \"127.0.0.1:0\"}\n    https: {address: \"127.0.0.1:0\", tls: {}}\n"), 0o600)
		if out, code := run("", "bootstrap", "--base", base, "--out", dir); code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		info, err := os.Stat(filepath.Join(dir, "ramjet.yaml"))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("ramjet.yaml: %v, mode %v; want mode 0600", err, info.Mode().Perm())
		}
		if out, code := run("", "bootstrap", "--base", base, "--out", dir, "--https-listener", "tls"); code != 2 || !strings.Contains(out, `--https-listener "tls"`) {
			t.Errorf("a missing HTTPS listener: exit %d:\n%s", code, out)
		}
	})
	t.Run("help exits 0", func(t *testing.T) {
		if out, code := run("", "run", "--help"); code != 0 || !strings.Contains(out, "usage: ramjet-ingress run") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("annotations lists the families", func(t *testing.T) {
		out, code := run("", "annotations", "--annotations", "all,-rewrite")
		if code != 0 || !strings.Contains(out, "rewrite (disabled)") || !strings.Contains(out, "nginx.ingress.kubernetes.io/auth-tls-secret") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
}

// TestVersionCommand checks that the version and commit the Makefile links
// in are what `ramjet-ingress --version` and `ramjet-ingress version` print.
func TestVersionCommand(t *testing.T) {
	const (
		version = "v9.8.7-3-gabcdef0-dirty"
		commit  = "abcdef0123456789abcdef0123456789abcdef01"
		pkg     = "github.com/ramjet-dev/ramjet/dataplane/version"
	)
	bin := filepath.Join(t.TempDir(), "ramjet-ingress")
	ldflags := "-X " + pkg + ".version=" + version + " -X " + pkg + ".commit=" + commit
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	want := "ramjet-ingress " + version + " (commit " + commit + ", " + runtime.Version() + ")\n"
	for _, arg := range []string{"--version", "version"} {
		out, err := exec.Command(bin, arg).CombinedOutput()
		if err != nil || string(out) != want {
			t.Errorf("ramjet-ingress %s: %v\ngot  %q\nwant %q", arg, err, out, want)
		}
	}
}
