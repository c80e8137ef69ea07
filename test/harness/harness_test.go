package harness

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// widgetCRD is a small CRD, in a file with another kind of object that
// WithCRDs must ignore.
const widgetCRD = `apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-crd, namespace: default}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.test.ramjet.dev}
spec:
  group: test.ramjet.dev
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

// TestCluster starts a cluster, stores the objects the controller's tests
// use, reaches a backend the EndpointSlice names, and restarts the API
// server.
func TestCluster(t *testing.T) {
	t.Parallel()
	crds := t.TempDir()
	if err := os.WriteFile(filepath.Join(crds, "widgets.yaml"), []byte(widgetCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c := StartAPIServer(t, WithCRDs(crds))
	api, etcd := c.Memory()
	t.Logf("cluster ready with its CRD in %s (kube-apiserver %d MiB, etcd %d MiB)", time.Since(start).Round(time.Millisecond), api, etcd)

	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, Namespace("shop"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	network := NewNetwork(t)
	web := network.Backend(t, "web", nil)

	svc, err := c.Client.CoreV1().Services("shop").Create(ctx, Service("shop", "web", 80, web.Port), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil || !netip.MustParsePrefix(ServiceCIDR).Contains(ip) {
		t.Errorf("cluster IP %q, want one in %s", svc.Spec.ClusterIP, ServiceCIDR)
	}
	slices := c.Client.DiscoveryV1().EndpointSlices("shop")
	if _, err := slices.Create(ctx, EndpointSlice("shop", "web", web.Port, web.IP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := slices.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Endpoints) != 1 || got.Endpoints[0].Addresses[0] != web.IP || *got.Ports[0].Port != BackendPort {
		t.Errorf("EndpointSlice read back: %+v %+v", got.Endpoints, got.Ports)
	}
	// What a proxy does with that EndpointSlice: connect to the address.
	addr := net.JoinHostPort(got.Endpoints[0].Addresses[0], "8080")
	if body := get(t, http.DefaultClient, "http://"+addr+"/"); body != "web\n" {
		t.Errorf("GET %s answered %q", addr, body)
	}

	// Events and Leases, which the controller writes.
	if _, err := c.Client.EventsV1().Events("shop").Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "web.1"},
		EventTime:           metav1.NowMicro(),
		ReportingController: "ramjet.dev/ingress", ReportingInstance: "test",
		Action: "Sync", Reason: "Test", Type: corev1.EventTypeNormal, Note: "hello",
		Regarding: corev1.ObjectReference{Kind: "Service", Namespace: "shop", Name: "web"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoordinationV1().Leases("shop").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: new("test")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// kubectl, with the CRD installed.
	c.Apply(t, "apiVersion: test.ramjet.dev/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\n")
	if out := c.Kubectl(t, "get", "widgets,services,endpointslices", "-n", "shop", "-o", "name"); !strings.Contains(out, "widget.test.ramjet.dev/w") ||
		!strings.Contains(out, "service/web") || !strings.Contains(out, "endpointslice.discovery.k8s.io/web") {
		t.Errorf("kubectl get:\n%s", out)
	}
	if _, err := c.Client.CoreV1().ConfigMaps("default").Get(ctx, "not-a-crd", metav1.GetOptions{}); err == nil {
		t.Error("WithCRDs applied an object that is not a CRD")
	}

	// The API server stops and comes back with the data, on the same address.
	stop := time.Now()
	c.Stop()
	stopped := time.Since(stop)
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.Client.CoreV1().Services("shop").Get(short, "web", metav1.GetOptions{}); err == nil {
		t.Fatal("the API server answered while stopped")
	}
	restart := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server stopped in %s, restarted in %s", stopped.Round(time.Millisecond), time.Since(restart).Round(time.Millisecond))
	if got, err := c.Client.CoreV1().Services("shop").Get(ctx, "web", metav1.GetOptions{}); err != nil || got.Spec.ClusterIP != svc.Spec.ClusterIP {
		t.Fatalf("after the restart: %v, %v", got, err)
	}
	if out := c.Kubectl(t, "get", "lease", "ramjet", "-n", "shop", "-o", "jsonpath={.spec.holderIdentity}"); out != "test" {
		t.Errorf("lease holder after the restart: %q", out)
	}
}

// TestNetworks runs plain and TLS backends in two networks at once and
// checks that closing one removes its namespace.
func TestNetworks(t *testing.T) {
	t.Parallel()
	a, b := NewNetwork(t), NewNetwork(t)
	if a.Prefix.Overlaps(b.Prefix) || !netip.MustParsePrefix("198.18.0.0/15").Contains(a.Prefix.Addr()) {
		t.Fatalf("networks %s and %s", a.Prefix, b.Prefix)
	}
	one, two := a.Backend(t, "one", nil), a.Backend(t, "two", nil)
	if one.IP == two.IP || one.Port != two.Port {
		t.Errorf("backends at %s and %s", one.Addr, two.Addr)
	}
	cert, pool, err := SelfSigned(b.Prefix.Addr().Next().Next().String())
	if err != nil {
		t.Fatal(err)
	}
	secure := b.TLSBackend(t, "secure", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	}), &tls.Config{Certificates: []tls.Certificate{cert}})
	tlsClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer tlsClient.CloseIdleConnections()

	for _, want := range []string{"one", "two"} {
		be := map[string]*Backend{"one": one, "two": two}[want]
		if body := get(t, http.DefaultClient, be.URL); body != want+"\n" {
			t.Errorf("GET %s: %q", be.URL, body)
		}
	}
	// The backend sees the host side of its network as the client.
	if body := get(t, tlsClient, secure.URL); !strings.HasPrefix(body, b.HostIP.String()+":") {
		t.Errorf("GET %s: remote address %q, want %s", secure.URL, body, b.HostIP)
	}

	one.Close()
	if _, err := http.Get(one.URL); err == nil {
		t.Errorf("GET %s worked after Close", one.URL)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("/run/netns", a.Name)); err == nil {
		t.Errorf("namespace %s still there after Close", a.Name)
	}
	if body := get(t, tlsClient, secure.URL); body == "" {
		t.Error("closing one network stopped the other's backend")
	}
}

// get returns the body of GET url, failing t unless the status is 200.
func get(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return string(body)
}

// ingressClassYAML is the IngressClass ramjet of Ramjet's controller.
const ingressClassYAML = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
`

// webIngressYAML is an Ingress of the class ramjet in namespace ns: host
// web.example.com to port 80 of the Service web.
func webIngressYAML(ns string) string {
	return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: ` + ns + `}
spec:
  ingressClassName: ramjet
  rules:
    - host: web.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`
}

// TestRamjet runs an ingress pod against the cluster: an Ingress applied
// with kubectl is served by ramjetd from a backend in the network
// namespace.
func TestRamjet(t *testing.T) {
	c := StartAPIServer(t)
	network := NewNetwork(t)
	backend := network.Backend(t, "web", nil)
	ctx := context.Background()
	if _, err := c.Client.CoreV1().Services("default").Create(ctx, Service("default", "web", 80, BackendPort), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.DiscoveryV1().EndpointSlices("default").Create(ctx, EndpointSlice("default", "web", BackendPort, backend.IP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := StartRamjet(t, c, RamjetOptions{})
	c.Apply(t, ingressClassYAML+"---\n"+webIngressYAML("default"))
	client := r.Client(nil)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get("http://web.example.com/")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "web" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("web.example.com is not served by the backend after 20 s (last: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNetworkRun runs the test OpenID Connect provider inside a network:
// it listens on an address only the namespace has, answers there, keeps
// its output in its log, and is gone after Stop.
func TestNetworkRun(t *testing.T) {
	t.Parallel()
	n := NewNetwork(t)
	a, err := n.AddAddr()
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.AddrPortFrom(a, 9000).String()
	p := n.Run(t, "oidc", "-listen", addr, "-client-id", "c", "-client-secret", "s", "-subject", "u", "-email", "u@example.test")
	discovery := "http://" + addr + "/oidc/.well-known/openid-configuration"
	p.WaitHTTP(t, 30*time.Second, discovery, http.StatusOK)
	if body := get(t, http.DefaultClient, discovery); !strings.Contains(body, `"issuer":"http://`+addr+`/oidc"`) {
		t.Errorf("discovery document %s, want the issuer http://%s/oidc", body, addr)
	}
	if log := p.Log(); !strings.Contains(log, "http://"+addr+"/oidc\n") {
		t.Errorf("log %q, want the issuer printed", log)
	}
	p.Stop()
	if _, err := http.Get(discovery); err == nil {
		t.Errorf("GET %s worked after Stop", discovery)
	}
}

// TestNetworkAddAddrOf asks for given addresses: a reserved one is skipped
// by AddAddr and given to AddAddrOf, a taken or foreign one is refused,
// and one removed may be asked for again.
func TestNetworkAddAddrOf(t *testing.T) {
	t.Parallel()
	n := NewNetwork(t)
	host := func(h byte) netip.Addr {
		a4 := n.Prefix.Addr().As4()
		a4[3] = h
		return netip.AddrFrom4(a4)
	}
	if err := n.Reserve(host(3)); err != nil {
		t.Fatal(err)
	}
	if err := n.AddAddrOf(host(4)); err != nil {
		t.Fatal(err)
	}
	var got []netip.Addr
	for range 2 {
		a, err := n.AddAddr()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if want := []netip.Addr{host(2), host(5)}; !slices.Equal(got, want) {
		t.Errorf("AddAddr gave %v, want %v (skipping the reserved and the asked-for address)", got, want)
	}
	for _, a := range []netip.Addr{host(2), host(4), host(1), host(255), netip.MustParseAddr("192.0.2.1")} {
		if err := n.AddAddrOf(a); err == nil {
			t.Errorf("AddAddrOf(%s) worked, want an error", a)
		}
	}
	if err := n.Reserve(host(2)); err == nil {
		t.Error("Reserve of a taken address worked, want an error")
	}
	if err := n.AddAddrOf(host(3)); err != nil {
		t.Errorf("AddAddrOf of the reserved address: %v", err)
	}
	if err := n.RemoveAddr(host(4)); err != nil {
		t.Fatal(err)
	}
	if err := n.AddAddrOf(host(4)); err != nil {
		t.Errorf("AddAddrOf after RemoveAddr: %v", err)
	}
}
