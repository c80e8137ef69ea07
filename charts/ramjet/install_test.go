package ramjet_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// install runs helm with args against the cluster (install, upgrade,
// uninstall, get) in the release namespace.
func (c *chartCluster) helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helm(t, append(args, "--namespace", namespace, "--kubeconfig", c.Kubeconfig)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// chartCluster is a real API server with the namespaces the configurations
// use.
type chartCluster struct{ *harness.Cluster }

func newChartCluster(t *testing.T, opts ...harness.Option) *chartCluster {
	t.Helper()
	c := harness.StartAPIServer(t, opts...)
	for _, ns := range []string{namespace, "team-a"} {
		if _, err := c.Client.CoreV1().Namespaces().Create(context.Background(), harness.Namespace(ns), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return &chartCluster{c}
}

// TestInstallUpgradeUninstall installs each configuration into a real API
// server (whose validation is the check of every object), upgrades it with
// changed values and uninstalls it, leaving nothing behind.
func TestInstallUpgradeUninstall(t *testing.T) {
	c := newChartCluster(t, harness.WithCRDs(gatewayCRDs(t)))
	for _, name := range configurations {
		t.Run(name, func(t *testing.T) {
			c.helm(t, "install", release, ".", "--values", valuesFile(name))
			manifest := c.helm(t, "get", "manifest", release)
			if out, err := c.RunKubectl(manifest, "get", "-f", "-", "-o", "name"); err != nil {
				t.Fatalf("objects of the release missing after install: %v\n%s", err, out)
			}
			before := podTemplate(t, c, name)

			c.helm(t, "upgrade", release, ".", "--values", valuesFile(name),
				"--set", "server.access_log=true", "--set", "podAnnotations.example\\.com/upgraded=yes")
			after := podTemplate(t, c, name)
			if after.Annotations["example.com/upgraded"] != "yes" {
				t.Errorf("after the upgrade the pod template's annotations are %v, want example.com/upgraded: yes", after.Annotations)
			}
			if before.Annotations["checksum/base"] == after.Annotations["checksum/base"] {
				t.Errorf("a change of server: kept the pod template's checksum/base %q: the pods would not restart with it", after.Annotations["checksum/base"])
			}
			base, err := c.Client.CoreV1().ConfigMaps(namespace).Get(context.Background(), release+"-ramjet-base", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(base.Data["base.yaml"], "access_log: true") {
				t.Errorf("after the upgrade base.yaml is\n%s\nwant access_log: true", base.Data["base.yaml"])
			}

			manifest = c.helm(t, "get", "manifest", release)
			c.helm(t, "uninstall", release, "--wait")
			out, err := c.RunKubectl(manifest, "get", "-f", "-", "-o", "name", "--ignore-not-found")
			if err != nil {
				t.Fatalf("kubectl get: %v\n%s", err, out)
			}
			if strings.TrimSpace(out) != "" {
				t.Errorf("left behind after uninstall:\n%s", out)
			}
		})
	}
}

// TestInstallRefusesMissingWatchNamespace: a watchNamespace the cluster
// does not have is refused at install, before any object is created.
func TestInstallRefusesMissingWatchNamespace(t *testing.T) {
	c := newChartCluster(t)
	out, err := helm(t, "install", release, ".", "--namespace", namespace, "--kubeconfig", c.Kubeconfig,
		"--set", "ingressController.watchNamespace=team-b")
	if err == nil || !strings.Contains(err.Error(), "ingressController.watchNamespace: the cluster has no namespace team-b") {
		t.Fatalf("helm install with a missing watchNamespace: got %v\n%s\nwant a refusal naming it", err, out)
	}
	sas, err := c.Client.CoreV1().ServiceAccounts(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sa := range sas.Items {
		if strings.HasPrefix(sa.Name, release) {
			t.Errorf("the refused install created ServiceAccount %s", sa.Name)
		}
	}
}

// gatewayCRDs is the folder of the Gateway API's standard CRDs, in the
// module the repository requires.
func gatewayCRDs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
}

// podTemplate returns the pod template of the configuration's workload.
func podTemplate(t *testing.T, c *chartCluster, config string) corev1.PodTemplateSpec {
	t.Helper()
	ctx := context.Background()
	name := release + "-ramjet"
	if config == "daemonset" {
		ds, err := c.Client.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ds.Spec.Template
	}
	d, err := c.Client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template
}
