package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// modulePath is the main module's path, used to recognise its go.mod.
const modulePath = "github.com/ramjet-dev/ramjet"

// binEnv names the environment variable that overrides the folder of the
// binaries.
const binEnv = "RAMJET_TEST_BIN"

// binaries are the programs the harness and the tests run, all built by
// test/tools/build.sh.
var binaries = []string{"etcd", "kube-apiserver", "kubectl", "helm", "oauth2-proxy", "oidc"}

// binDir is BinDir's result, computed once per test binary: a failed
// build is not retried by every test of the package.
var binDir = sync.OnceValues(findBinaries)

// BinDir returns the folder holding etcd, kube-apiserver, kubectl, helm,
// oauth2-proxy and oidc (the programs of test/tools):
// $RAMJET_TEST_BIN when set, otherwise .cache/bin under the root of the
// main module (found by walking up from the working directory to its
// go.mod). When one of them is missing it runs test/tools/build.sh into
// that folder first, which takes about ten minutes the first time; other
// test binaries that need them meanwhile wait for the same build.
func BinDir() (string, error) { return binDir() }

func findBinaries() (string, error) {
	root, rootErr := moduleRoot()
	dir := os.Getenv(binEnv)
	if dir == "" {
		if rootErr != nil {
			return "", fmt.Errorf("finding the test binaries: %w (or set %s)", rootErr, binEnv)
		}
		dir = filepath.Join(root, ".cache", "bin")
	}
	if err := ensure(root, rootErr, dir, binaries); err != nil {
		return "", err
	}
	return dir, nil
}

// RequireBinaries returns BinDir after making sure it also holds names,
// programs of test/tools/build.sh that not every test needs (the test
// cluster's kube-controller-manager, kube-scheduler and kwok): when one is
// missing it runs the build script into the folder first, as BinDir does.
func RequireBinaries(names ...string) (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	root, rootErr := moduleRoot()
	if err := ensure(root, rootErr, dir, names); err != nil {
		return "", err
	}
	return dir, nil
}

// ensure runs the build script (from the module at root) into dir when dir
// lacks one of names.
func ensure(root string, rootErr error, dir string, names []string) error {
	if missing(dir, names) == nil {
		return nil
	}
	if rootErr != nil {
		return fmt.Errorf("%s lacks %s and the build script is not found: %w",
			dir, strings.Join(missing(dir, names), ", "), rootErr)
	}
	if err := build(root, dir, names); err != nil {
		return err
	}
	if m := missing(dir, names); m != nil {
		return fmt.Errorf("test/tools/build.sh ran but %s still lacks %s", dir, strings.Join(m, ", "))
	}
	return nil
}

// missing returns the programs of names that dir lacks (or cannot
// execute).
func missing(dir string, names []string) []string {
	var out []string
	for _, b := range names {
		if unix.Access(filepath.Join(dir, b), unix.X_OK) != nil {
			out = append(out, b)
		}
	}
	return out
}

// build runs test/tools/build.sh into dir while holding a lock on
// dir/.harness-build.lock, so test binaries of several packages started by
// one `go test ./...` build once and the others wait.
func build(root, dir string, names []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".harness-build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close() // releases the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	if missing(dir, names) == nil {
		return nil // another test binary built them while this one waited
	}
	script := filepath.Join(root, "test", "tools", "build.sh")
	fmt.Fprintf(os.Stderr, "harness: building %s into %s with %s (about ten minutes the first time)\n",
		strings.Join(missing(dir, names), ", "), dir, script)
	cmd := exec.Command("sh", script, dir)
	cmd.Dir = root
	if slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(binaries, n) }) {
		cmd.Env = append(os.Environ(), "RAMJET_CLUSTER_TOOLS=1") // the test cluster's programs
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", script, dir, err, tail(out.String(), 40))
	}
	return nil
}

// moduleRoot walks up from the working directory to the folder whose
// go.mod declares the main module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if declaresModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

// declaresModule reports whether the go.mod at path is the main module's.
func declaresModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == modulePath
		}
	}
	return false
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d lines left out]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
