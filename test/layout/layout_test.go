// Package layout checks rules of the repository's shape that the compiler
// does not: which packages may import what, and what git may track.
package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDataPlaneHasNoKubernetesCode fails when ramjetd, the data plane or
// the route policies depend, even indirectly, on a k8s.io package: the
// proxy serves untrusted traffic and must not carry a Kubernetes client.
func TestDataPlaneHasNoKubernetesCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test",
		"../../cmd/ramjetd", "../../dataplane/...", "../../policies/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var k8s []string
	for pkg := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/") {
			k8s = append(k8s, pkg)
		}
	}
	if len(k8s) > 0 {
		t.Errorf("the data plane depends on Kubernetes packages:\n%s", strings.Join(k8s, "\n"))
	}
	if !strings.Contains(string(out), "github.com/ramjet-dev/ramjet/dataplane/proxy") {
		t.Errorf("go list did not list the data plane; the check would pass without checking:\n%.500s", out)
	}
}
