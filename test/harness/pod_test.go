package harness

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// probePeriod is the readiness probes' period in the tests.
const probePeriod = 200 * time.Millisecond

// serviceVariable matches the names of the variables kubelet derives from
// Services.
var serviceVariable = regexp.MustCompile(`^[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_TCP(_PROTO|_PORT|_ADDR)?)?)$`)

// serviceAccountDir is where pods find their service account's token.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// shopObjects are an application for the ingress pod: a Service of the
// backend, its EndpointSlice (added by the test) and an Ingress.
var shopObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  ports: [{port: 80, targetPort: 8080}]
---
` + webIngressYAML("shop")

// TestRunPod runs the ingress pod of testdata/ramjet-pod.yaml (a
// Deployment as the chart renders it) with the pod runner and checks what
// a kubelet would give it, then that it serves an Ingress and stops as
// kubelet stops a pod. One API server serves every case.
func TestRunPod(t *testing.T) {
	c := StartAPIServer(t)
	network := NewNetwork(t)
	manifest, err := os.ReadFile("testdata/ramjet-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Apply(t, string(manifest))

	t.Run("ramjet", func(t *testing.T) { testRamjetPod(t, c, network) })
	t.Run("daemonset with an automounted token", func(t *testing.T) { testDaemonSetPod(t, c, network) })
	t.Run("image not in the registry", func(t *testing.T) { testMissingImage(t, c, network) })
}

func testRamjetPod(t *testing.T, c *Cluster, network *Network) {
	ctx := t.Context()
	backend := network.Backend(t, "web", nil)
	c.Apply(t, shopObjects)
	if _, err := c.Client.DiscoveryV1().EndpointSlices("shop").Create(ctx, EndpointSlice("shop", "web", BackendPort, backend.IP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	pod := RunPod(t, c, network, Deployment("ingress", "ingress-ramjet"), PodOptions{ProbePeriod: probePeriod})
	if err := pod.WaitReady(90 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("pod %s ready at %s in %s", pod.Name, pod.IP, time.Since(start).Round(time.Millisecond))

	t.Run("status", func(t *testing.T) { checkPodObject(t, c, pod) })
	t.Run("users", func(t *testing.T) {
		for _, name := range []string{"ramjetd", "controller"} {
			status := procFile(t, pod, name, "status")
			for _, want := range []string{"Uid:\t65532\t65532\t65532\t65532", "Gid:\t65532\t65532\t65532\t65532", "Groups:\t65532", "NoNewPrivs:\t1", "CapEff:\t0000000000000000"} {
				if !strings.Contains(status, want+"\n") && !strings.Contains(status, want+" \n") {
					t.Errorf("container %s: /proc/PID/status lacks %q:\n%s", name, want, status)
				}
			}
		}
	})
	t.Run("service account token", func(t *testing.T) {
		if _, err := os.Stat(containerPath(t, pod, "ramjetd", serviceAccountDir+"/token")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ramjetd's container has a token file (stat: %v), want none", err)
		}
		token, err := os.ReadFile(containerPath(t, pod, "controller", serviceAccountDir+"/token"))
		if err != nil {
			t.Fatalf("the controller's container has no token: %v", err)
		}
		if got := tokenPod(t, string(token)); got != pod.Name {
			t.Errorf("token bound to pod %q, want %q", got, pod.Name)
		}
		ca, _ := os.ReadFile(containerPath(t, pod, "controller", serviceAccountDir+"/ca.crt"))
		if !bytes.Equal(ca, c.Config.CAData) {
			t.Errorf("ca.crt in the controller's container:\n%s\nwant the cluster's CA:\n%s", ca, c.Config.CAData)
		}
		if ns, _ := os.ReadFile(containerPath(t, pod, "controller", serviceAccountDir+"/namespace")); string(ns) != "ingress" {
			t.Errorf("namespace file %q, want %q", ns, "ingress")
		}
	})
	t.Run("files", func(t *testing.T) {
		info, err := os.Stat(containerPath(t, pod, "ramjetd", "/etc/ramjet/generated/ramjet.yaml"))
		if err != nil {
			t.Fatalf("ramjet.yaml, written by the init container: %v", err)
		}
		if uid := fileOwner(info); uid != 65532 {
			t.Errorf("ramjet.yaml owned by %d, want 65532 (the init container's user)", uid)
		}
		for _, path := range []string{"/usr/local/bin/ramjetd", "/new-file"} {
			err = os.WriteFile(containerPath(t, pod, "ramjetd", path), nil, 0o755)
			if err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("writing %s in ramjetd's container: %v, want a read-only file system", path, err)
			}
		}
		out, err := pod.Exec(ctx, "ramjetd", "ramjetd", "validate", "--config", "/etc/ramjet/generated/ramjet.yaml")
		if err != nil || !strings.Contains(out, "is valid") {
			t.Errorf("exec ramjetd validate: %q, %v", out, err)
		}
		if _, err := pod.Exec(ctx, "ramjetd", "/usr/local/bin/sh"); err == nil || !strings.Contains(err.Error(), "no such program") {
			t.Errorf("exec of a program the image lacks: %v, want no such program", err)
		}
	})
	t.Run("environment", func(t *testing.T) {
		env := strings.Split(strings.TrimRight(procFile(t, pod, "controller", "environ"), "\x00"), "\x00")
		want := map[string]string{
			"POD_NAME": pod.Name, "POD_NAMESPACE": "ingress", "HOSTNAME": pod.Name, "HOME": "/", "PATH": strings.TrimPrefix(defaultPath, "PATH="),
			"KUBERNETES_SERVICE_HOST": apiServiceIP().String(), "KUBERNETES_SERVICE_PORT": "443",
			"INGRESS_RAMJET_SERVICE_PORT_HTTP": "80",
		}
		got := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
			if _, named := want[k]; !named && !serviceVariable.MatchString(k) {
				t.Errorf("%s=%q in the controller's environment: neither the manifest's, nor kubelet's, nor the runtime's", k, v)
			}
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s=%q in the controller's environment, want %q", k, got[k], v)
			}
		}
		if args := procFile(t, pod, "controller", "cmdline"); !strings.Contains(args, "--publish-service\x00ingress/ingress-ramjet\x00") {
			t.Errorf("$(POD_NAMESPACE) not expanded in the controller's args: %q", args)
		}
	})
	t.Run("probes", func(t *testing.T) {
		for _, p := range []struct{ container, kind string }{{"controller", Readiness}, {"controller", Liveness}, {"ramjetd", Liveness}} {
			if err := pod.Probe(p.container, p.kind); err != nil {
				t.Errorf("%s probe of %s: %v", p.kind, p.container, err)
			}
		}
		if err := pod.Probe("ramjetd", Readiness); err == nil || !strings.Contains(err.Error(), "no readiness probe") {
			t.Errorf("readiness probe of ramjetd, which has none: %v", err)
		}
	})
	t.Run("ingress", func(t *testing.T) {
		body := waitBody(t, "http://"+pod.IP.String()+":8080/", "web.example.com", "web\n")
		t.Logf("web.example.com served through the pod: %q", body)
	})
	t.Run("leader and Ingress status", func(t *testing.T) { checkLeader(t, c, pod) })
	t.Run("delete", func(t *testing.T) { checkDelete(t, c, network, pod) })
}

// checkPodObject checks the Pod object the runner keeps.
func checkPodObject(t *testing.T, c *Cluster, pod *Pod) {
	got, err := c.Client.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Name, "ingress-ramjet-") || got.Labels["app.kubernetes.io/instance"] != "ingress" {
		t.Errorf("pod %s labels %v, want a name from the Deployment and its template's labels", got.Name, got.Labels)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].Kind != "Deployment" || got.OwnerReferences[0].Name != "ingress-ramjet" {
		t.Errorf("owner references %+v, want the Deployment", got.OwnerReferences)
	}
	if got.Status.Phase != corev1.PodRunning || got.Status.PodIP != pod.IP.String() || got.Spec.NodeName != NodeName {
		t.Errorf("phase %s, pod IP %s, node %q; want Running, %s, %q", got.Status.Phase, got.Status.PodIP, got.Spec.NodeName, pod.IP, NodeName)
	}
	if s := got.Status.InitContainerStatuses; len(s) != 1 || s[0].State.Terminated == nil || s[0].State.Terminated.ExitCode != 0 {
		t.Errorf("init container statuses %+v, want bootstrap terminated with 0", s)
	}
	for _, cs := range got.Status.ContainerStatuses {
		if cs.State.Running == nil || !cs.Ready {
			t.Errorf("container %s: state %+v, ready %v; want running and ready", cs.Name, cs.State, cs.Ready)
		}
	}
	ready := false
	for _, cond := range got.Status.Conditions {
		ready = ready || cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue
	}
	if !ready {
		t.Errorf("conditions %+v, want Ready True", got.Status.Conditions)
	}
}

// checkLeader checks that the controller, in-cluster, leads (its Lease
// holder is POD_NAME from the fieldRef) and writes the Ingress's status
// from --publish-service $(POD_NAMESPACE)/ingress-ramjet.
func checkLeader(t *testing.T, c *Cluster, pod *Pod) {
	ctx := t.Context()
	svc, err := c.Client.CoreV1().Services("ingress").Get(ctx, "ingress-ramjet", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		lease, _ := c.Client.CoordinationV1().Leases("ingress").Get(ctx, "ingress-ramjet-leader", metav1.GetOptions{})
		ing, _ := c.Client.NetworkingV1().Ingresses("shop").Get(ctx, "web", metav1.GetOptions{})
		var holder, ip string
		if lease != nil && lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		if ing != nil && len(ing.Status.LoadBalancer.Ingress) > 0 {
			ip = ing.Status.LoadBalancer.Ingress[0].IP
		}
		if strings.HasPrefix(holder, pod.Name+"_") && ip == svc.Spec.ClusterIP {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: Lease holder %q, want %s_...; Ingress address %q, want %s", holder, pod.Name, ip, svc.Spec.ClusterIP)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkDelete deletes the pod and checks that the preStop hook (ramjetd
// drain, through the admin socket of the container's /run/ramjet) ran
// before ramjetd's shutdown, and that
// the processes, the network namespace and the Pod object are gone.
func checkDelete(t *testing.T, c *Cluster, network *Network, pod *Pod) {
	pid, err := pod.PID("ramjetd")
	if err != nil {
		t.Fatal(err)
	}
	if err := pod.Delete(); err != nil {
		t.Fatal(err)
	}
	log := pod.Log("ramjetd")
	hook := strings.Index(log, "=== harness: lifecycle.preStop ok\ndrained:")
	shutdown := strings.Index(log, "shutting down")
	if hook < 0 || shutdown < hook {
		t.Errorf("ramjetd's log: want the preStop hook's drain, then the shutdown:\n%s", log)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("ramjetd's process %d still runs after Delete", pid)
	}
	if _, err := c.Client.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Pod object after Delete: %v, want not found", err)
	}
	checkNoPodNamespace(t, network)
}

// checkNoPodNamespace checks that no pod's namespace of network is left.
func checkNoPodNamespace(t *testing.T, network *Network) {
	t.Helper()
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if isPodNamespace(network.Name, e.Name()) {
			t.Errorf("network namespace %s left behind", e.Name())
		}
	}
}

// daemonSetObjects is a DaemonSet whose pod automounts its service account
// token (the API server's admission adds the kube-api-access volume) and
// takes ramjetd's flags from a ConfigMap and a Secret through $(VAR).
const daemonSetObjects = `
apiVersion: v1
kind: ConfigMap
metadata: {name: flags, namespace: ingress}
data: {level: debug}
---
apiVersion: v1
kind: Secret
metadata: {name: flags, namespace: ingress}
stringData: {drain: 2s, other: unused}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: edge, namespace: ingress}
spec:
  selector: {matchLabels: {app: edge}}
  template:
    metadata: {labels: {app: edge, tier: front}}
    spec:
      securityContext: {runAsUser: 1000, runAsGroup: 2000, supplementalGroups: [3000]}
      volumes:
        - {name: generated, emptyDir: {}}
        - name: base
          configMap: {name: ingress-ramjet-base}
        - name: flags
          secret:
            secretName: flags
            items: [{key: drain, path: secret/drain, mode: 0400}]
        - name: labels
          downwardAPI:
            items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]
      initContainers:
        - name: bootstrap
          image: ghcr.io/ramjet-dev/ramjet
          command: [/usr/local/bin/ramjet-ingress, bootstrap]
          args: [--base, /etc/ramjet/base/base.yaml, --out, /etc/ramjet/generated]
          volumeMounts:
            - {name: generated, mountPath: /etc/ramjet/generated, subPath: out}
            - {name: base, mountPath: /etc/ramjet/base}
      containers:
        - name: ramjetd
          image: ghcr.io/ramjet-dev/ramjet@sha256:0000000000000000000000000000000000000000000000000000000000000000
          args: [--config, /etc/ramjet/generated/ramjet.yaml, --log-level, $(LEVEL), --drain-delay, $(DRAIN)]
          env:
            - name: LEVEL
              valueFrom: {configMapKeyRef: {name: flags, key: level}}
            - name: DRAIN
              valueFrom: {secretKeyRef: {name: flags, key: drain}}
            - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
            - {name: WHERE, value: "$(NODE)/$(LEVEL) $(UNDEFINED) $$(LEVEL)"}
          volumeMounts:
            - {name: generated, mountPath: /etc/ramjet/generated, subPath: out}
            - {name: generated, mountPath: /run/ramjet, subPath: admin}
            - {name: flags, mountPath: /etc/flags}
            - {name: labels, mountPath: /etc/podinfo}
`

// testDaemonSetPod runs the pod of a DaemonSet that uses what the ingress
// pod does not: an automounted token, env from a ConfigMap and a Secret,
// $(VAR) in args, a secret and a downwardAPI volume, subPath, the image's
// entrypoint and a user without fsGroup.
func testDaemonSetPod(t *testing.T, c *Cluster, network *Network) {
	c.Apply(t, daemonSetObjects)
	pod := RunPod(t, c, network, DaemonSet("ingress", "edge"), PodOptions{ProbePeriod: probePeriod})
	if err := pod.WaitReady(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	// The image's entrypoint with the args.
	args := strings.Split(strings.TrimRight(procFile(t, pod, "ramjetd", "cmdline"), "\x00"), "\x00")
	want := []string{"/usr/local/bin/ramjetd", "--config", "/etc/ramjet/generated/ramjet.yaml", "--log-level", "debug", "--drain-delay", "2s"}
	if strings.Join(args, " ") != strings.Join(want, " ") {
		t.Errorf("ramjetd's command line:\n got %q\nwant %q", args, want)
	}
	if env := procFile(t, pod, "ramjetd", "environ"); !strings.Contains(env, "\x00WHERE="+NodeName+"/debug $(UNDEFINED) $(LEVEL)\x00") {
		t.Errorf("WHERE not expanded as kubelet does in %q", env)
	}
	if status := procFile(t, pod, "ramjetd", "status"); !strings.Contains(status, "Uid:\t1000\t") || !strings.Contains(status, "Groups:\t2000 3000 \n") {
		t.Errorf("ramjetd's user and groups, want 1000, 2000 and 3000:\n%s", status)
	}
	for path, want := range map[string]string{
		serviceAccountDir + "/namespace": "ingress",
		"/etc/flags/secret/drain":        "2s",
		"/etc/podinfo/labels":            "app=\"edge\"\ntier=\"front\"",
	} {
		if got, err := os.ReadFile(containerPath(t, pod, "ramjetd", path)); err != nil || string(got) != want {
			t.Errorf("%s in the container: %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := os.Stat(containerPath(t, pod, "ramjetd", serviceAccountDir+"/token")); err != nil {
		t.Errorf("no automounted token: %v", err)
	}
	if _, err := os.Stat(containerPath(t, pod, "ramjetd", "/etc/flags/other")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a Secret key the items leave out is in the volume: %v", err)
	}
	got, err := c.Client.CoreV1().Pods("ingress").Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.OwnerReferences[0].Kind != "DaemonSet" || !strings.HasPrefix(got.Spec.Volumes[len(got.Spec.Volumes)-1].Name, "kube-api-access-") {
		t.Errorf("owner %+v, volumes %+v: want the DaemonSet, and the kube-api-access volume of admission", got.OwnerReferences, got.Spec.Volumes)
	}
	// Deleted as kubectl deletes it: the runner sees the deletion and stops.
	c.Kubectl(t, "delete", "pod", "-n", "ingress", pod.Name, "--wait=true", "--timeout=60s")
	if _, err := pod.PID("ramjetd"); err == nil {
		t.Error("ramjetd still runs after kubectl deleted its pod")
	}
}

// testMissingImage checks that a pod fails to start, with errors that name
// what is wrong, and leaves nothing behind: an image the registry lacks,
// then an init container that fails.
func testMissingImage(t *testing.T, c *Cluster, network *Network) {
	for _, tc := range []struct {
		name, spec, want string
	}{
		{
			name: "image",
			spec: "containers: [{name: shell, image: docker.io/library/busybox:1.36, command: [sh]}]",
			want: `spec.containers[0]: image "docker.io/library/busybox:1.36": the harness's registry has no program for repository "docker.io/library/busybox"`,
		},
		{
			name: "failing init container",
			spec: "containers: [{name: ramjetd, image: ghcr.io/ramjet-dev/ramjet}]\n      " +
				"initContainers: [{name: bootstrap, image: ghcr.io/ramjet-dev/ramjet, command: [/usr/local/bin/ramjet-ingress, bootstrap]}]",
			want: "init container bootstrap exited with code 2; its log:\nramjet-ingress: bootstrap: --base and --out are required",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "broken-" + strings.ReplaceAll(tc.name, " ", "-")
			c.Apply(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: `+name+`, namespace: ingress}
spec:
  selector: {matchLabels: {app: `+name+`}}
  template:
    metadata: {labels: {app: `+name+`}}
    spec:
      `+tc.spec+`
`)
			_, err := NewPod(c, network, Deployment("ingress", name), t.TempDir(), PodOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewPod: %v\nwant an error with %q", err, tc.want)
			}
			pods, err := c.Client.CoreV1().Pods("ingress").List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + name})
			if err != nil || len(pods.Items) > 0 {
				t.Errorf("pods left after the failure: %v, %v", pods, err)
			}
		})
	}
	checkNoPodNamespace(t, network)
}

// procFile returns /proc/PID/name of container's process.
func procFile(t *testing.T, pod *Pod, container, name string) string {
	t.Helper()
	pid, err := pod.PID(container)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// containerPath returns the host path of p as container sees it.
func containerPath(t *testing.T, pod *Pod, container, p string) string {
	t.Helper()
	pid, err := pod.PID(container)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join("/proc", strconv.Itoa(pid), "root", p)
}

// tokenPod returns the pod a service account token is bound to.
func tokenPod(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is no JWT", token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Kubernetes struct {
			Pod struct{ Name string } `json:"pod"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.Kubernetes.Pod.Name
}

// waitBody GETs url with the Host header host until it answers 200 with
// want, for 30 s.
func waitBody(t *testing.T, url, host, want string) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		req.Host = host
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == want {
				return string(body)
			}
			last = resp.Status + " " + string(body)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s (Host %s) after 30 s: %s, want 200 %q", url, host, last, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fileOwner returns the user owning a file.
func fileOwner(info fs.FileInfo) int {
	return int(info.Sys().(*syscall.Stat_t).Uid)
}

// fileGroup returns the group owning a file.
func fileGroup(info fs.FileInfo) int {
	return int(info.Sys().(*syscall.Stat_t).Gid)
}
