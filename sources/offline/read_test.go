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

	snap, warnings, err := Read([]string{dir}, nil)
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

	wantWarnings := []string{
		filepath.Join(dir, "a/b/legacy.yml") + " document 1: Ingress shop/legacy is extensions/v1beta1, which Kubernetes no longer serves; it is read as networking.k8s.io/v1",
		filepath.Join(dir, "mixed.YAML") + " document 3: not YAML or JSON",
	}
	if len(warnings) != len(wantWarnings) {
		t.Fatalf("warnings = %q, want %d", warnings, len(wantWarnings))
	}
	for i, w := range wantWarnings {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i, warnings[i], w)
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
	snap, warnings, err := Read([]string{"-"}, strings.NewReader(jsonIngress))
	if err != nil || len(warnings) != 0 || len(snap.Ingresses) != 1 {
		t.Errorf("stdin: %d Ingresses, warnings %q, err %v; want 1, none, nil", len(snap.Ingresses), warnings, err)
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
