//go:build conformance

package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// NodeName is the name of the cluster's one Node, which the scheduler
// binds every pod to.
const NodeName = "ramjet-node"

// nodeIP is the Node's InternalIP: the API server reaches the log server
// (the Node's kubelet endpoint) there.
const nodeIP = "127.0.0.1"

// programs are the binaries of test/tools/build.sh the cluster runs
// besides the API server.
var programs = []string{"kube-controller-manager", "kube-scheduler", "kwok"}

// controllers are kube-controller-manager's controllers the cluster runs:
// those Deployments, Services, namespaces and pods' credentials need.
var controllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"daemonset-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
}

// startControllerManager starts kube-controller-manager with the
// controllers, signing service account tokens with the API server's key.
func (c *Cluster) startControllerManager(bin string) (*harness.Program, error) {
	name := "kube-controller-manager"
	return harness.StartProgram(name, filepath.Join(bin, name), c.componentLog(name),
		"--kubeconfig="+c.Kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--service-account-private-key-file="+filepath.Join(c.Dir, "sa.key"),
		"--root-ca-file="+filepath.Join(c.Dir, "ca.crt"),
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--secure-port=0",
		// Pods come and go in seconds in tests: sync Deployments at once.
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
		"--concurrent-service-endpoint-syncs=10",
		"--endpointslice-updates-batch-period=0s",
	)
}

// startScheduler starts kube-scheduler with its default profile.
func (c *Cluster) startScheduler(bin string) (*harness.Program, error) {
	name := "kube-scheduler"
	return harness.StartProgram(name, filepath.Join(bin, name), c.componentLog(name),
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	)
}

// createNode creates the Node object kwok keeps Ready.
func (c *Cluster) createNode() error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: NodeName,
		Labels: map[string]string{
			corev1.LabelHostname:   NodeName,
			corev1.LabelOSStable:   "linux",
			corev1.LabelArchStable: "amd64",
		},
	}}
	_, err := c.Client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating the Node %s: %w", NodeName, err)
	}
	return nil
}

// startKwok starts kwok managing the Node only: its configuration has a
// Node stage and no Pod stage, so kwok leaves the pods to the pod runner.
func (c *Cluster) startKwok(bin string) (*harness.Program, error) {
	config := filepath.Join(c.Dir, "kwok.yaml")
	if err := os.WriteFile(config, []byte(kwokStages(c.logs.port)), 0o600); err != nil {
		return nil, err
	}
	name := "kwok"
	return harness.StartProgram(name, filepath.Join(bin, name), c.componentLog(name),
		"--kubeconfig="+c.Kubeconfig,
		"--config="+config,
		"--manage-single-node="+NodeName,
		"--node-lease-duration-seconds=40",
	)
}

// kwokStages is kwok's configuration: one Stage that makes the Node Ready
// with the standard conditions, the InternalIP nodeIP, the log server's
// port as its kubelet endpoint, and room for many pods.
func kwokStages(logPort int) string {
	return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ["True"]
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - type: {{ .type | Quote }}
        status: {{ .status | Quote }}
        reason: {{ .reason | Quote }}
        message: {{ .message | Quote }}
        lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      addresses:
      - type: InternalIP
        address: ` + nodeIP + `
      daemonEndpoints:
        kubeletEndpoint:
          Port: ` + strconv.Itoa(logPort) + `
      capacity: {cpu: "1k", memory: 1Ti, pods: "1k"}
      allocatable: {cpu: "1k", memory: 1Ti, pods: "1k"}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: kwok
        containerRuntimeVersion: ramjet-harness
      phase: Running
`
}

// nodeReady reports whether the Node's Ready condition is true.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
