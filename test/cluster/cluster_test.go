//go:build conformance

package cluster_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ramjet-dev/ramjet/test/cluster"
)

// waitTimeout bounds each wait of the test.
const waitTimeout = 2 * time.Minute

// listenWait bounds the wait for a Ready pod's server to listen.
const listenWait = 30 * time.Second

// echoManifests is a Deployment of two echo servers, as the conformance
// suite's infra-backend-v1, and a Service of each type.
const echoManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: echo}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: echo}
spec:
  replicas: 2
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
      - name: echo
        image: registry.k8s.io/gateway-api/echo-basic:v1.5.1
        env:
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: echo}
spec:
  selector: {app: echo}
  ports:
  - {port: 8080, targetPort: 3000}
---
apiVersion: v1
kind: Service
metadata: {name: echo-lb, namespace: echo}
spec:
  type: LoadBalancer
  selector: {app: echo}
  ports:
  - {name: http, port: 80, targetPort: 3000}
`

func TestEchoDeployment(t *testing.T) {
	c := cluster.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*waitTimeout)
	defer cancel()
	c.Apply(t, echoManifests)

	pods := waitPodsReady(ctx, t, c, "echo", "app=echo", 2)
	for _, p := range pods {
		if !c.Network.Prefix.Contains(netip.MustParseAddr(p.Status.PodIP)) {
			t.Errorf("pod %s has address %s, not one of the network %s", p.Name, p.Status.PodIP, c.Network.Prefix)
		}
		if got := echoPod(t, "http://"+p.Status.PodIP+":3000/"); got != p.Name {
			t.Errorf("GET the pod %s answered pod %q", p.Name, got)
		}
	}
	for _, svc := range []string{"echo", "echo-lb"} {
		waitSliceAddresses(ctx, t, c, svc, podIPs(pods))
	}

	lb := waitLoadBalancer(ctx, t, c, "echo", "echo-lb")
	if !c.Network.Prefix.Contains(lb) {
		t.Errorf("the load balancer's address %s is not one of the network %s", lb, c.Network.Prefix)
	}
	seen := map[string]bool{}
	for range 10 {
		seen[echoPod(t, "http://"+lb.String()+":80/")] = true
	}
	for _, p := range pods {
		if !seen[p.Name] {
			t.Errorf("10 requests to the load balancer %s reached %v, never pod %s", lb, seen, p.Name)
		}
	}

	logs := c.Kubectl(t, "logs", "-n", "echo", pods[0].Name)
	if !strings.Contains(logs, "listening") {
		t.Errorf("kubectl logs %s: no line saying the server listens:\n%s", pods[0].Name, logs)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if logs := c.Kubectl(t, "logs", "-n", "echo", pods[0].Name, "--since-time="+future); logs != "" {
		t.Errorf("kubectl logs --since-time=%s answered lines written before:\n%s", future, logs)
	}

	c.Kubectl(t, "delete", "namespace", "echo", "--wait=false")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, "echo", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		ns, _ := c.Client.CoreV1().Namespaces().Get(ctx, "echo", metav1.GetOptions{})
		t.Fatalf("the namespace echo is still there after %s: %+v", waitTimeout, ns.Status)
	}
}

// waitPodsReady waits until n pods of the selector are Ready and returns
// them.
func waitPodsReady(ctx context.Context, t *testing.T, c *cluster.Cluster, ns, selector string, n int) []corev1.Pod {
	t.Helper()
	var ready []corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil
		}
		ready = ready[:0]
		for _, p := range list.Items {
			if podReady(&p) {
				ready = append(ready, p)
			}
		}
		return len(ready) == n && len(list.Items) == n, nil
	})
	if err != nil {
		t.Fatalf("%d pods of %s in %s are not Ready after %s:\n%s", n, selector, ns, waitTimeout, c.Kubectl(t, "get", "pods,replicasets,events", "-n", ns, "-o", "wide"))
	}
	return ready
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podIPs(pods []corev1.Pod) []string {
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	return ips
}

// waitSliceAddresses waits until the EndpointSlices of the Service list
// exactly the addresses, ready.
func waitSliceAddresses(ctx context.Context, t *testing.T, c *cluster.Cluster, svc string, want []string) {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.DiscoveryV1().EndpointSlices("echo").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return false, nil
		}
		got = got[:0]
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					got = append(got, e.Addresses...)
				}
			}
		}
		return sameSet(got, want), nil
	})
	if err != nil {
		t.Fatalf("the EndpointSlices of Service %s list %v after %s, want %v", svc, got, waitTimeout, want)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, s := range a {
		m[s] = true
	}
	for _, s := range b {
		if !m[s] {
			return false
		}
	}
	return true
}

// waitLoadBalancer waits for the Service's load balancer address.
func waitLoadBalancer(ctx context.Context, t *testing.T, c *cluster.Cluster, ns, name string) netip.Addr {
	t.Helper()
	var addr netip.Addr
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		svc, err := c.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(svc.Status.LoadBalancer.Ingress) == 0 {
			return false, nil
		}
		addr, err = netip.ParseAddr(svc.Status.LoadBalancer.Ingress[0].IP)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("Service %s/%s has no load balancer address after %s", ns, name, waitTimeout)
	}
	return addr
}

// echoPod GETs url from an echo server and returns the pod its answer
// names.
//
// A pod without a readiness probe is Ready once its process started, as
// with a kubelet, which may be before it listens: a request that finds no
// listener (refused, or reset through the load balancer) is sent again
// for up to listenWait.
func echoPod(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(listenWait)
	resp, err := client.Get(url)
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		resp, err = client.Get(url)
	}
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v: %s", url, resp.Status, err, body)
	}
	var answer struct {
		Pod string `json:"pod"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatalf("GET %s: not echo's JSON: %v: %s", url, err, body)
	}
	return answer.Pod
}

// requestManifests is one echo server and a Service of type LoadBalancer
// in front of it.
const requestManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: lbip}
---
apiVersion: v1
kind: Pod
metadata: {name: echo, namespace: lbip, labels: {app: echo}}
spec:
  containers:
  - name: echo
    image: registry.k8s.io/gateway-api/echo-basic:v1.5.1
    env:
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: lbip}
spec:
  type: LoadBalancer
  selector: {app: echo}
  ports:
  - {name: http, port: 80, targetPort: 3000}
`

// TestLoadBalancerIP checks spec.loadBalancerIP: a free address of the
// network (a reserved one included) is given, the listeners moving there;
// an address outside the network or another Service's leaves the Service
// without an address.
func TestLoadBalancerIP(t *testing.T) {
	c := cluster.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*waitTimeout)
	defer cancel()
	a4 := c.Network.Prefix.Addr().As4()
	a4[3] = 250
	reserved := netip.AddrFrom4(a4)
	if err := c.Network.Reserve(reserved); err != nil {
		t.Fatal(err)
	}
	c.Apply(t, requestManifests)
	waitPodsReady(ctx, t, c, "lbip", "app=echo", 1)

	first := waitLoadBalancer(ctx, t, c, "lbip", "lb")
	if first == reserved {
		t.Fatalf("the load balancer took the reserved address %s", reserved)
	}
	if got := echoPod(t, "http://"+first.String()+":80/"); got != "echo" {
		t.Errorf("GET %s answered pod %q", first, got)
	}

	setLoadBalancerIP(ctx, t, c, "lb", reserved.String())
	waitLoadBalancerIs(ctx, t, c, "lb", reserved.String())
	if got := echoPod(t, "http://"+reserved.String()+":80/"); got != "echo" {
		t.Errorf("GET %s answered pod %q", reserved, got)
	}

	c.Apply(t, strings.ReplaceAll(requestManifests, "name: lb,", "name: other,"))
	setLoadBalancerIP(ctx, t, c, "other", reserved.String())
	for _, ip := range []string{reserved.String(), "198.51.100.1"} {
		setLoadBalancerIP(ctx, t, c, "other", ip)
		time.Sleep(2 * time.Second)
		svc, err := c.Client.CoreV1().Services("lbip").Get(ctx, "other", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := svc.Status.LoadBalancer.Ingress; len(got) != 0 {
			t.Errorf("loadBalancerIP %s, which is not available: got address %v, want none", ip, got)
		}
	}

	// The address the Service let go may be asked for again.
	setLoadBalancerIP(ctx, t, c, "lb", first.String())
	waitLoadBalancerIs(ctx, t, c, "lb", "")
	setLoadBalancerIP(ctx, t, c, "other", reserved.String())
	waitLoadBalancerIs(ctx, t, c, "other", reserved.String())
}

// setLoadBalancerIP sets the spec.loadBalancerIP of the Service lbip/name.
func setLoadBalancerIP(ctx context.Context, t *testing.T, c *cluster.Cluster, name, ip string) {
	t.Helper()
	patch := `{"spec":{"loadBalancerIP":"` + ip + `"}}`
	if _, err := c.Client.CoreV1().Services("lbip").Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching Service lbip/%s: %v", name, err)
	}
}

// waitLoadBalancerIs waits until the Service lbip/name's only load
// balancer address is ip (none when "").
func waitLoadBalancerIs(ctx context.Context, t *testing.T, c *cluster.Cluster, name, ip string) {
	t.Helper()
	var got []corev1.LoadBalancerIngress
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		svc, err := c.Client.CoreV1().Services("lbip").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = svc.Status.LoadBalancer.Ingress
		return (ip == "" && len(got) == 0) || (len(got) == 1 && got[0].IP == ip), nil
	})
	if err != nil {
		t.Fatalf("Service lbip/%s: load balancer addresses %v after %s, want %q", name, got, waitTimeout, ip)
	}
}
