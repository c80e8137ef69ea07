package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Kubectl runs kubectl with args against the cluster and returns its
// standard output; a failure fails t with kubectl's error output.
func (c *Cluster) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := c.RunKubectl("", args...)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return out
}

// Apply applies the YAML objects (`kubectl apply -f -`); a failure fails t.
func (c *Cluster) Apply(t testing.TB, yaml string) {
	t.Helper()
	if _, err := c.RunKubectl(yaml, "apply", "-f", "-"); err != nil {
		t.Fatalf("harness: %v", err)
	}
}

// RunKubectl runs kubectl with args against the cluster, stdin as its
// standard input, and returns its standard output; the error carries the
// command and its error output.
func (c *Cluster) RunKubectl(stdin string, args ...string) (string, error) {
	full := append([]string{"--kubeconfig=" + c.Kubeconfig, "--cache-dir=" + filepath.Join(c.Dir, "kubectl-cache")}, args...)
	cmd := exec.Command(filepath.Join(c.bin, "kubectl"), full...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// installCRDs applies the CustomResourceDefinitions of the YAML files
// under dir (server-side: large CRDs exceed the annotation client-side
// apply keeps) and waits until they are Established.
func (c *Cluster) installCRDs(dir string) error {
	var docs bytes.Buffer
	enc := yaml.NewEncoder(&docs)
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml")) {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			var head struct {
				Kind     string
				Metadata struct{ Name string }
			}
			if err := doc.Decode(&head); err != nil || head.Kind != "CustomResourceDefinition" {
				continue // not an object, or another kind
			}
			if err := enc.Encode(&doc); err != nil {
				return err
			}
			names = append(names, "crd/"+head.Metadata.Name)
		}
	})
	if err != nil {
		return fmt.Errorf("reading CRDs: %w", err)
	}
	if len(names) == 0 {
		return fmt.Errorf("no CustomResourceDefinition in the YAML files under %s", dir)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if _, err := c.RunKubectl(docs.String(), "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		return err
	}
	_, err = c.RunKubectl("", append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, names...)...)
	return err
}
