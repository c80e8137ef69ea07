package offline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

const listYAML = `apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Service
    metadata: {name: web, namespace: shop}
    spec: {ports: [{port: 80}]}
  - apiVersion: v1
    kind: Secret
    metadata: {name: web-tls, namespace: shop}
    type: kubernetes.io/tls
    data: {tls.crt: Y3J0, tls.key: a2V5}
  - apiVersion: v1
    kind: Secret
    metadata: {name: users, namespace: shop}
    data: {auth: b2xk, other: a2VwdA==}
    stringData: {auth: "alice:$2y$hash"}
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: unrelated, namespace: shop}
`

const v1beta1YAML = `apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: legacy, namespace: shop}
spec:
  backend: {serviceName: fallback, servicePort: http}
  rules:
    - host: old.example.com
      http:
        paths:
          - path: /
            backend: {serviceName: web, servicePort: 80}
`

const namespacelessYAML = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain}
spec:
  ingressClassName: ramjet
---
this: [is not
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1]}]
`

const jsonIngress = `{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
 "metadata": {"name": "from-json", "namespace": "shop"}, "spec": {}}`

// TestReadFolder reads a folder as a user's repository holds it: nested
// files of every manifest extension, Lists, old Ingress versions, documents
// without a namespace and documents that do not parse.
func TestReadFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a/list.yaml", listYAML)
	writeFile(t, dir, "a/b/legacy.yml", v1beta1YAML)
	writeFile(t, dir, "mixed.YAML", namespacelessYAML)
	writeFile(t, dir, "z.json", jsonIngress)
	writeFile(t, dir, "notes.txt", "kind: Ingress\nmetadata: {name: ignored}\n")

	snap, notes, err := Read([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ing := range snap.Ingresses {
		names = append(names, ing.Namespace+"/"+ing.Name)
	}
	if want := []string{"default/plain", "shop/from-json", "shop/legacy"}; !slices.Equal(names, want) {
		t.Errorf("Ingresses = %v, want %v", names, want)
	}
	if snap.IngressClasses["ramjet"] == nil || snap.IngressClasses["ramjet"].Namespace != "" {
		t.Error("the IngressClass is missing or got a namespace")
	}
	if snap.Services[snapshot.Key{Namespace: "shop", Name: "web"}] == nil {
		t.Error("the List's Service is missing")
	}
	if data, ok := snap.Secret("shop", "web-tls"); !ok || string(data["tls.key"]) != "key" {
		t.Error("the List's Secret is missing or not decoded")
	}
	if data, _ := snap.Secret("shop", "users"); string(data["auth"]) != "alice:$2y$hash" || string(data["other"]) != "kept" {
		t.Errorf("stringData is not merged into data as the API server does: %q", data)
	}
	if len(snap.EndpointSlices[snapshot.Key{Namespace: "shop", Name: "web"}]) != 1 {
		t.Error("the EndpointSlice is missing")
	}
	checkLegacy(t, snap)

	checkPrefixes(t, "warnings", notes.Warnings, []string{
		filepath.Join(dir, "a/b/legacy.yml") + " document 1: Ingress shop/legacy is extensions/v1beta1, which Kubernetes no longer serves; it is read as networking.k8s.io/v1",
	})
	checkPrefixes(t, "unreadable", notes.Unreadable, []string{
		filepath.Join(dir, "mixed.YAML") + " document 3: not YAML or JSON",
	})
}

// checkPrefixes checks that each line starts with the wanted text.
func checkPrefixes(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %q, want %d", what, got, len(want))
		return
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("%s %d = %q, want it to start with %q", what, i, got[i], w)
		}
	}
}

// checkLegacy checks the conversion of the v1beta1 Ingress.
func checkLegacy(t *testing.T, snap *snapshot.Snapshot) {
	t.Helper()
	i := slices.IndexFunc(snap.Ingresses, func(ing *networkingv1.Ingress) bool { return ing.Name == "legacy" })
	if i < 0 {
		return
	}
	ing := snap.Ingresses[i]
	if b := ing.Spec.DefaultBackend; b == nil || b.Service.Name != "fallback" || b.Service.Port.Name != "http" {
		t.Errorf("default backend = %+v, want fallback:http", b)
	}
	p := ing.Spec.Rules[0].HTTP.Paths[0]
	if p.Backend.Service.Name != "web" || p.Backend.Service.Port.Number != 80 || p.PathType != nil {
		t.Errorf("path = %+v, want web:80 without a path type", p)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Read([]string{filepath.Join(dir, "missing.yaml")}, nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: err = %v, want one naming it", err)
	}
	snap, notes, err := Read([]string{"-"}, strings.NewReader(jsonIngress))
	if err != nil || len(notes.Warnings)+len(notes.Unreadable) != 0 || len(snap.Ingresses) != 1 {
		t.Errorf("stdin: %d Ingresses, notes %q, err %v; want 1, none, nil", len(snap.Ingresses), notes, err)
	}
}

func TestWriteFilesIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "k.key")
	if err := os.WriteFile(existing, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(dir, map[string][]byte{"k.key": []byte("new"), "c.crt": []byte("cert")}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"k.key": "new", "c.crt": "cert"} {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, info.Mode().Perm())
		}
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadUndecodable reads objects that do not decode: of a kind
// translation reads, each is unreadable, naming its document, the object
// and the field as written; of another kind, a warning.
func TestReadUndecodable(t *testing.T) {
	const ingressHead = "apiVersion: networking.k8s.io/v1\nkind: Ingress\n"
	tests := []struct {
		name       string
		doc        string
		unreadable string // "" when the document is only a warning
		warning    string
	}{
		{"an annotation value written as a number",
			ingressHead + "metadata:\n  name: web\n  namespace: shop\n  annotations:\n    nginx.ingress.kubernetes.io/ssl-redirect: \"false\"\n    nginx.ingress.kubernetes.io/proxy-read-timeout: 3600\nspec: {}\n",
			`stdin document 1: Ingress shop/web does not decode: metadata.annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]: a number, where Kubernetes wants a string (quote the value); it is not translated`, ""},
		{"a boolean annotation value",
			ingressHead + "metadata:\n  name: web\n  annotations: {nginx.ingress.kubernetes.io/use-regex: true}\n",
			`stdin document 1: Ingress web does not decode: metadata.annotations["nginx.ingress.kubernetes.io/use-regex"]: a boolean, where Kubernetes wants a string (quote the value); it is not translated`, ""},
		{"a port number written as a string",
			ingressHead + "metadata: {name: web, namespace: shop}\nspec:\n  rules:\n    - host: a.example.com\n      http:\n        paths:\n          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: \"8080\"}}}}\n",
			"stdin document 1: Ingress shop/web does not decode: spec.rules[0].http.paths[1].backend.service.port.number: a string, where Kubernetes wants an integer; it is not translated", ""},
		{"rules written as a map",
			ingressHead + "metadata: {name: web}\nspec:\n  rules: {host: a.example.com}\n",
			"stdin document 1: Ingress web does not decode: spec.rules: an object, where Kubernetes wants a list; it is not translated", ""},
		{"a Service port written as a string",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: \"80\"}]}\n",
			"stdin document 1: Service shop/web does not decode: spec.ports[0].port: a string, where Kubernetes wants an integer; it is not translated", ""},
		{"an old Ingress version",
			"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: old, annotations: {nginx.ingress.kubernetes.io/proxy-body-size: 8}}\nspec: {}\n",
			`stdin document 1: Ingress old does not decode: metadata.annotations["nginx.ingress.kubernetes.io/proxy-body-size"]: a number, where Kubernetes wants a string (quote the value); it is not translated`, ""},
		{"a List item without a name",
			"apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: fine}\n  - " + strings.ReplaceAll(ingressHead, "\n", "\n    ") + "metadata: {labels: {tier: 1}}\n",
			`stdin document 1 item 2: Ingress (without a name) does not decode: metadata.labels["tier"]: a number, where Kubernetes wants a string (quote the value); it is not translated`, ""},
		{"a name that is no Kubernetes name is quoted",
			ingressHead + "metadata: {name: \"web\\u001b[2J\", namespace: shop, annotations: {nginx.ingress.kubernetes.io/use-regex: true}}\n",
			`stdin document 1: Ingress shop/"web\x1b[2J" does not decode: metadata.annotations["nginx.ingress.kubernetes.io/use-regex"]: a boolean, where Kubernetes wants a string (quote the value); it is not translated`, ""},
		{"a kind translation does not read", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: \"3\"}\n",
			"", "stdin document 1: Deployment web does not decode: spec.replicas: a string, where Kubernetes wants an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, notes, err := Read([]string{"-"}, strings.NewReader(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Ingresses) != 0 || len(snap.Services) != 0 {
				t.Errorf("%d Ingresses and %d Services read, want none", len(snap.Ingresses), len(snap.Services))
			}
			var wantUnreadable, wantWarnings []string
			if tc.unreadable != "" {
				wantUnreadable = []string{tc.unreadable}
			}
			if tc.warning != "" {
				wantWarnings = []string{tc.warning}
			}
			if !slices.Equal(notes.Unreadable, wantUnreadable) {
				t.Errorf("unreadable:\n got %q\nwant %q", notes.Unreadable, wantUnreadable)
			}
			if !slices.Equal(notes.Warnings, wantWarnings) {
				t.Errorf("warnings:\n got %q\nwant %q", notes.Warnings, wantWarnings)
			}
		})
	}
}
