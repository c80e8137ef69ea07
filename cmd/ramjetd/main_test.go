package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildRamjetd compiles the command once per test run.
func buildRamjetd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ramjetd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func writeConfig(t *testing.T, dir, body string) string {
	path := filepath.Join(dir, "ramjet.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommands(t *testing.T) {
	bin := buildRamjetd(t)
	dir := t.TempDir()
	socket := filepath.Join(dir, "admin.sock")
	good := `
server:
  listeners: {http: {address: "` + freePort(t) + `"}}
  health: {address: "` + freePort(t) + `"}
  admin: {socket: "` + socket + `"}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes: [{match: {path: {prefix: /}}, action: {pool: web}}]
    pools:
      web: {members: ["127.0.0.1:9", {address: "127.0.0.1:10", weight: 3}]}
`
	goodPath := writeConfig(t, dir, good)

	t.Run("validate accepts a good file", func(t *testing.T) {
		out, err := exec.Command(bin, "validate", "--config", goodPath).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "is valid") {
			t.Errorf("got %v: %s", err, out)
		}
	})
	t.Run("validate lists every problem and exits 1", func(t *testing.T) {
		badDir := t.TempDir()
		bad := strings.Replace(good, "[app.test]", "[App.test]", 1) + "      other: {members: [\"nohost\"], retries: 12}\n"
		out, err := exec.Command(bin, "validate", "--config", writeConfig(t, badDir, bad)).CombinedOutput()
		exit, _ := err.(*exec.ExitError)
		if exit == nil || exit.ExitCode() != 1 {
			t.Fatalf("exit %v, want 1: %s", err, out)
		}
		for _, want := range []string{
			`tenants.t.applications.app.domains[0]: "App.test" is not a domain name: must be lower case`,
			`tenants.t.pools.other.members[0].address: "nohost" is not host:port`,
			`tenants.t.pools.other.retries: must be 0..10`,
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		out, err := exec.Command(bin, "frobnicate").CombinedOutput()
		if err == nil || !strings.Contains(string(out), `unknown command "frobnicate"`) {
			t.Errorf("got %v: %s", err, out)
		}
	})

	t.Run("serve, show upstreams, stop on SIGTERM", func(t *testing.T) {
		cmd := exec.Command(bin, "--config", goodPath, "--drain-delay", "100ms")
		var logs strings.Builder
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		waitFor(t, func() bool { _, err := os.Stat(socket); return err == nil })
		out, err := exec.Command(bin, "upstreams", "--admin-socket", socket).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "POOL") || !strings.Contains(string(out), "web") {
			t.Errorf("upstreams: %v\n%s", err, out)
		}
		out, err = exec.Command(bin, "upstreams", "show", "web", "--admin-socket", socket).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "127.0.0.1:10") || !strings.Contains(string(out), "WEIGHT") {
			t.Errorf("upstreams show: %v\n%s", err, out)
		}
		out, err = exec.Command(bin, "upstreams", "show", "nope", "--admin-socket", socket).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `no pool \"nope\"`) && !strings.Contains(string(out), `no pool "nope"`) {
			t.Errorf("upstreams show nope: %v\n%s", err, out)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("exit after SIGTERM: %v\n%s", err, logs.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ramjetd did not stop after SIGTERM\n%s", logs.String())
		}
		if _, err := os.Stat(socket); !os.IsNotExist(err) {
			t.Errorf("the admin socket is left behind: %v", err)
		}
	})
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
