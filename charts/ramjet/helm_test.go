package ramjet_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// kubeVersion is the Kubernetes version helm template assumes: the API
// server the tests install into (test/tools/kube).
const kubeVersion = "v1.37.2"

// release and namespace are the names the tests install under, as the
// README's examples do.
const (
	release   = "ingress"
	namespace = "ingress"
)

// helm runs the helm the test tools built with args in the chart's folder
// (with a HOME of its own, so no user configuration is read) and returns
// its standard output; a failure returns the error with standard error.
func helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	bin, err := harness.BinDir()
	if err != nil {
		t.Fatalf("test tools: %v", err)
	}
	home := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "helm"), args...)
	cmd.Env = append(os.Environ(),
		"HOME="+home, "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config",
		"HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %v: %w\n%s", args, err, stderr.Bytes())
	}
	return stdout.String(), nil
}

// render runs helm template for the release with the values files and
// extra flags (--set ...).
func render(t testing.TB, valueFiles []string, flags ...string) (string, error) {
	t.Helper()
	args := []string{"template", release, ".", "--namespace", namespace, "--kube-version", kubeVersion}
	for _, f := range valueFiles {
		args = append(args, "--values", f)
	}
	return helm(t, append(args, flags...)...)
}
