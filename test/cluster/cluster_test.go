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
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ramjet-dev/ramjet/test/cluster"
)

// waitTimeout bounds each wait of the test.
const waitTimeout = 2 * time.Minute

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
func echoPod(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
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
