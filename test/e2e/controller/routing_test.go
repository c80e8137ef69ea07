package controller

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestApplyIngress: two Ingresses applied with kubectl, two hosts, two
// backends: each host is answered by its own backend, another host gets
// ramjetd's 404.
func TestApplyIngress(t *testing.T) {
	e := newEnv(t)
	e.service("shop", e.backend("shop"))
	e.service("blog", e.backend("blog"))
	r := e.startRamjet()
	e.apply(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: NS}
spec:
  ingressClassName: ramjet
  rules:
    - host: shop.NS.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: shop, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: blog, namespace: NS}
spec:
  ingressClassName: ramjet
  rules:
    - host: blog.NS.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: blog, port: {number: 80}}}}
`)
	client := r.Client(nil)
	expect(t, client, "http://"+e.host("shop")+"/cart", "shop")
	expect(t, client, "http://"+e.host("blog")+"/posts/1", "blog")
	if err := check(t.Context(), client, "http://"+e.host("other")+"/", ""); err != nil {
		t.Errorf("a host no Ingress names: %v", err)
	}
}

// pathRule is one path of a row of the Kubernetes table; it sends to the
// backend p<index>.
type pathRule struct{ pathType, path string }

// TestKubernetesPathTable serves the examples of the Kubernetes
// documentation's path types (reference/ingress-nginx.md §6) and checks,
// over HTTP, which path answers each request: one Ingress, a host per row,
// the row's i-th path sending to backend p<i>. Ramjet follows the table
// (ingress-nginx differs on the trailing-slash rows, where it redirects).
func TestKubernetesPathTable(t *testing.T) {
	prefix := func(paths ...string) []pathRule {
		var out []pathRule
		for _, p := range paths {
			out = append(out, pathRule{"Prefix", p})
		}
		return out
	}
	exact := func(p string) []pathRule { return []pathRule{{"Exact", p}} }
	rows := []struct {
		name    string
		paths   []pathRule
		request string
		want    string // the backend, "" for 404
	}{
		{"prefix / matches all paths", prefix("/"), "/any/thing", "p0"},
		{"exact /foo matches /foo", exact("/foo"), "/foo", "p0"},
		{"exact /foo does not match /bar", exact("/foo"), "/bar", ""},
		{"exact /foo does not match /foo/", exact("/foo"), "/foo/", ""},
		{"exact /foo/ does not match /foo", exact("/foo/"), "/foo", ""},
		{"prefix /foo matches /foo", prefix("/foo"), "/foo", "p0"},
		{"prefix /foo matches /foo/", prefix("/foo"), "/foo/", "p0"},
		{"prefix /foo/ matches /foo", prefix("/foo/"), "/foo", "p0"},
		{"prefix /foo/ matches /foo/", prefix("/foo/"), "/foo/", "p0"},
		{"prefix /aaa/bb does not match /aaa/bbb", prefix("/aaa/bb"), "/aaa/bbb", ""},
		{"prefix /aaa/bbb matches /aaa/bbb", prefix("/aaa/bbb"), "/aaa/bbb", "p0"},
		{"prefix /aaa/bbb/ ignores the trailing slash", prefix("/aaa/bbb/"), "/aaa/bbb", "p0"},
		{"prefix /aaa/bbb matches the trailing slash", prefix("/aaa/bbb"), "/aaa/bbb/", "p0"},
		{"prefix /aaa/bbb matches a subpath", prefix("/aaa/bbb"), "/aaa/bbb/ccc", "p0"},
		{"prefix /aaa/bbb is not a string prefix", prefix("/aaa/bbb"), "/aaa/bbbxyz", ""},
		{"prefixes / and /aaa: /aaa wins", prefix("/", "/aaa"), "/aaa/ccc", "p1"},
		{"prefixes /, /aaa, /aaa/bbb: the longest wins", prefix("/", "/aaa", "/aaa/bbb"), "/aaa/bbb", "p2"},
		{"prefixes /, /aaa, /aaa/bbb: / takes the rest", prefix("/", "/aaa", "/aaa/bbb"), "/ccc", "p0"},
		{"prefix /aaa does not match /ccc: no default backend", prefix("/aaa"), "/ccc", ""},
		{"prefix and exact /foo: exact wins", []pathRule{{"Prefix", "/foo"}, {"Exact", "/foo"}}, "/foo", "p1"},
		{"exact and prefix /foo: exact wins in either order", []pathRule{{"Exact", "/foo"}, {"Prefix", "/foo"}}, "/foo", "p0"},
		{"prefix and exact /foo: prefix takes /foo/", []pathRule{{"Prefix", "/foo"}, {"Exact", "/foo"}}, "/foo/", "p0"},
		{"matching is case sensitive", prefix("/foo"), "/FOO", ""},
	}

	e := newEnv(t)
	for i := range 3 {
		name := fmt.Sprintf("p%d", i)
		e.service(name, e.backend(name))
	}
	var spec strings.Builder
	spec.WriteString("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: table, namespace: NS}\nspec:\n  ingressClassName: ramjet\n  rules:\n")
	for i, row := range rows {
		fmt.Fprintf(&spec, "    - host: r%d.NS.test\n      http:\n        paths:\n", i)
		for j, p := range row.paths {
			fmt.Fprintf(&spec, "          - {path: %q, pathType: %s, backend: {service: {name: p%d, port: {number: 80}}}}\n", p.path, p.pathType, j)
		}
	}
	// Wildcard hosts cover one DNS label.
	spec.WriteString("    - host: '*.wild.NS.test'\n      http:\n        paths:\n          - {path: /, pathType: Prefix, backend: {service: {name: p0, port: {number: 80}}}}\n")
	r := e.startRamjet()
	e.apply(spec.String())
	client := r.Client(nil)
	expect(t, client, "http://"+e.host("r0")+"/", "p0") // the Ingress is served: every row is in
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			url := fmt.Sprintf("http://r%d.%s.test%s", i, e.ns, row.request)
			if err := check(t.Context(), client, url, row.want); err != nil {
				t.Errorf("GET %s (paths %v): %v", url, row.paths, err)
			}
		})
	}
	for _, tc := range []struct{ host, want string }{
		{"bar.wild." + e.ns + ".test", "p0"},
		{"baz.bar.wild." + e.ns + ".test", ""},
		{"wild." + e.ns + ".test", ""},
	} {
		t.Run("wildcard host "+tc.host, func(t *testing.T) {
			if err := check(t.Context(), client, "http://"+tc.host+"/", tc.want); err != nil {
				t.Errorf("*.wild.%s.test, GET http://%s/: %v", e.ns, tc.host, err)
			}
		})
	}
}

// TestUpdateAndDelete: changing an Ingress's backend moves its traffic,
// without a failed request on the way; deleting the Ingress makes its host
// answer 404.
func TestUpdateAndDelete(t *testing.T) {
	s := newSite(t)
	l := startLoad(s.client, s.url, "web", "next")
	s.setBackend("web", "next")
	expect(t, s.client, s.url, "next")
	l.finish(t)
	for range 20 {
		if err := check(t.Context(), s.client, s.url, "next"); err != nil {
			t.Fatalf("after the change: %v", err)
		}
	}

	if err := cluster.Client.NetworkingV1().Ingresses(s.ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(t, s.client, s.url, "")
}
