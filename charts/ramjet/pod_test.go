package ramjet_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// podWait bounds each wait of the pod tests: a pod's start, an Ingress
// served, a status written.
const podWait = 90 * time.Second

// probePeriod shortens the readiness probes' period in the tests, so that
// a ready pod is seen sooner than a kubelet would show it.
const probePeriod = 200 * time.Millisecond

// shop is an application for the ingress pod: the Service web (its
// EndpointSlice is the test's), an Ingress that serves it and one that
// Ramjet refuses (an access directive in its configuration-snippet).
const shop = `
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec:
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[1]s}
spec:
  ingressClassName: %[2]s
  rules:
    - host: web.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: private
  namespace: %[1]s
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: "deny all;"
spec:
  ingressClassName: %[2]s
  rules:
    - host: private.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`

// applyShop creates the shop application in ns for the IngressClass class,
// with its EndpointSlice pointing at a backend of the network.
func applyShop(t *testing.T, c *chartCluster, n *harness.Network, ns, class string) {
	t.Helper()
	backend := n.Backend(t, "web", nil)
	c.Apply(t, fmt.Sprintf(shop, ns, class))
	if _, err := c.Client.DiscoveryV1().EndpointSlices(ns).Create(context.Background(),
		harness.EndpointSlice(ns, "web", harness.BackendPort, backend.IP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestPodServesIngress installs the chart and runs the pod of its
// Deployment as processes (the chart's command, arguments, environment,
// volumes, users and probes, authenticated as its ServiceAccount against
// an API server that authorizes with RBAC): an Ingress is served through
// it, its status written and the refused one's Event created, which proves
// the chart's arguments, probes and RBAC together.
func TestPodServesIngress(t *testing.T) {
	c := newChartCluster(t)
	n := harness.NewNetwork(t)
	ctx := t.Context()

	// Without its RBAC the controller cannot list what it watches, so it
	// never loads a configuration: the pod must not become ready, while
	// ramjetd already answers (404) from the init container's file.
	c.helm(t, "install", release, ".", "--set", "rbac.create=false")
	pod := harness.RunPod(t, c.Cluster, n, harness.Deployment(namespace, release+"-ramjet"), harness.PodOptions{ProbePeriod: probePeriod})
	waitStatus(t, "http://"+pod.IP.String()+":8080/", "web.example.com", http.StatusNotFound)
	waitLog(t, pod, "controller", `msg="Failed to watch"`)
	if err := pod.Probe("controller", harness.Readiness); err == nil {
		t.Fatal("the controller's readiness probe answers 200 before the controller could load any configuration")
	}

	c.helm(t, "upgrade", release, ".", "--reuse-values", "--set", "rbac.create=true")
	if err := pod.WaitReady(podWait); err != nil {
		t.Fatalf("pod not ready once the chart's RBAC exists: %v", err)
	}

	applyShop(t, c, n, "shop", "ramjet")
	if body := waitStatus(t, "http://"+pod.IP.String()+":8080/", "web.example.com", http.StatusOK); !strings.HasPrefix(body, "web") {
		t.Errorf("web.example.com answered %q, want the backend web", body)
	}
	waitStatus(t, "http://"+pod.IP.String()+":8080/", "private.example.com", http.StatusNotFound)

	t.Run("status", func(t *testing.T) {
		// The cloud's load balancer: its address in the Service's status.
		lb := &corev1.Service{}
		lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.7"}}
		svc, err := c.Client.CoreV1().Services(namespace).Get(ctx, release+"-ramjet", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Status = lb.Status
		if _, err := c.Client.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the Ingress's status to carry the Service's address", func() (bool, error) {
			ing, err := c.Client.NetworkingV1().Ingresses("shop").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			lbs := ing.Status.LoadBalancer.Ingress
			return len(lbs) == 1 && lbs[0].IP == "198.51.100.7", nil
		})
	})
	t.Run("event", func(t *testing.T) {
		waitFor(t, "the UnsupportedAccessControl Event of the refused Ingress", func() (bool, error) {
			events, err := c.Client.EventsV1().Events("shop").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, e := range events.Items {
				if e.Regarding.Name == "private" && e.Reason == "UnsupportedAccessControl" {
					return true, nil
				}
			}
			return false, nil
		})
	})
	t.Run("no token in ramjetd", func(t *testing.T) {
		for container, want := range map[string]bool{"ramjetd": false, "controller": true} {
			pid, err := pod.PID(container)
			if err != nil {
				t.Fatal(err)
			}
			_, err = os.Stat(fmt.Sprintf("/proc/%d/root/var/run/secrets/kubernetes.io/serviceaccount/token", pid))
			if got := err == nil; got != want {
				t.Errorf("container %s has a service account token: %t (stat: %v), want %t", container, got, err, want)
			}
		}
	})
	t.Run("probes", func(t *testing.T) {
		for _, p := range []struct{ container, kind string }{
			{"controller", harness.Readiness}, {"controller", harness.Liveness},
			{"ramjetd", harness.Readiness}, {"ramjetd", harness.Liveness},
		} {
			if err := pod.Probe(p.container, p.kind); err != nil {
				t.Errorf("%s probe of %s: %v", p.kind, p.container, err)
			}
		}
	})
}

// TestPodWatchNamespace: with watchNamespace the pod serves that
// namespace with Roles alone, and its credential cannot list Secrets of
// another namespace. A Role missing (here the one for the default
// certificate outside the watched namespace) shows as a 403 in the
// controller's log and a pod that stays unready, and the controller keeps
// running until the Role exists.
func TestPodWatchNamespace(t *testing.T) {
	c := newChartCluster(t)
	n := harness.NewNetwork(t)
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, harness.Namespace("other"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.helm(t, "install", release, ".", "--values", valuesFile("watchnamespace"),
		"--set", "ingressController.defaultCertificate=other/wildcard")
	role := release + "-ramjet-certificate"
	if err := c.Client.RbacV1().Roles("other").Delete(ctx, role, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the Role for the default certificate: %v", err)
	}
	pod := harness.RunPod(t, c.Cluster, n, harness.Deployment(namespace, release+"-ramjet"), harness.PodOptions{ProbePeriod: probePeriod})
	waitLog(t, pod, "controller", `secrets \"wildcard\" is forbidden`)
	if err := pod.Probe("controller", harness.Readiness); err == nil {
		t.Error("the controller is ready although it cannot read its default certificate")
	}
	if err := pod.Probe("controller", harness.Liveness); err != nil {
		t.Errorf("the controller's liveness after the refusal: %v", err)
	}

	c.helm(t, "upgrade", release, ".", "--reuse-values")
	if err := pod.WaitReady(podWait); err != nil {
		t.Fatalf("pod not ready once the Role exists again: %v", err)
	}
	applyShop(t, c, n, "team-a", "ramjet-team-a")
	waitStatus(t, "http://"+pod.IP.String()+":8080/", "web.example.com", http.StatusOK)

	config := rest.AnonymousClientConfig(c.Config)
	config.BearerToken = podToken(t, pod)
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		namespace string
		forbidden bool
	}{{"team-a", false}, {"other", true}, {namespace, true}, {"default", true}} {
		_, err := client.CoreV1().Secrets(tc.namespace).List(ctx, metav1.ListOptions{})
		if got := apierrors.IsForbidden(err); got != tc.forbidden {
			t.Errorf("the pod's credential listing the Secrets of %s: %v, want forbidden %t", tc.namespace, err, tc.forbidden)
		}
	}
}

// podToken reads the token the controller container was given.
func podToken(t *testing.T, pod *harness.Pod) string {
	t.Helper()
	pid, err := pod.PID("controller")
	if err != nil {
		t.Fatal(err)
	}
	token, err := os.ReadFile(fmt.Sprintf("/proc/%d/root/var/run/secrets/kubernetes.io/serviceaccount/token", pid))
	if err != nil {
		t.Fatal(err)
	}
	return string(token)
}

// waitStatus waits until GET url with Host host answers status, and
// returns the body.
func waitStatus(t *testing.T, url, host string, status int) string {
	t.Helper()
	var body string
	waitFor(t, fmt.Sprintf("%s (Host %s) to answer %d", url, host, status), func() (bool, error) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == status, err
	})
	return body
}

// waitLog waits until the log of the pod's container holds text.
func waitLog(t *testing.T, pod *harness.Pod, container, text string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("the %s log to say %q", container, text), func() (bool, error) {
		return strings.Contains(pod.Log(container), text), nil
	})
}

// waitFor polls check until it reports true, failing t after podWait with
// the last error.
func waitFor(t *testing.T, what string, check func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(podWait)
	for {
		ok, err := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; last error: %v", podWait, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
