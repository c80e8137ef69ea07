package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The version and commit the tests link into ramjetd, as the Makefile does.
const (
	testVersion = "v9.8.7-3-gabcdef0-dirty"
	testCommit  = "abcdef0123456789abcdef0123456789abcdef01"
	versionPkg  = "github.com/ramjet-dev/ramjet/dataplane/version"
)

// buildRamjetd compiles the command, with testVersion and testCommit.
func buildRamjetd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ramjetd")
	ldflags := "-X " + versionPkg + ".version=" + testVersion + " -X " + versionPkg + ".commit=" + testCommit
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
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

// appConfig is a configuration with the listener http at listen, the
// health listener, the admin socket, and the host app.test served by the
// pool web of members (the items of a YAML flow list).
func appConfig(listen, health, socket, members string) string {
	return `
server:
  listeners: {http: {address: "` + listen + `"}}
  health: {address: "` + health + `"}
  admin: {socket: "` + socket + `"}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes: [{match: {path: {prefix: /}}, action: {pool: web}}]
    pools:
      web: {members: [` + members + `]}
`
}

func TestCommands(t *testing.T) {
	bin := buildRamjetd(t)
	dir := t.TempDir()
	socket := filepath.Join(dir, "admin.sock")
	good := appConfig(freePort(t), freePort(t), socket, `"127.0.0.1:9", {address: "127.0.0.1:10", weight: 3}`)
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
	t.Run("version", func(t *testing.T) {
		want := "ramjetd " + testVersion + " (commit " + testCommit + ", " + runtime.Version() + ")\n"
		for _, args := range [][]string{{"--version"}, {"version"}, {"serve", "--version", "--config", "/nonexistent"}} {
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil || string(out) != want {
				t.Errorf("ramjetd %s: %v\ngot  %q\nwant %q", strings.Join(args, " "), err, out, want)
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

// TestDrain checks `ramjetd drain` as a preStop hook runs it: readiness
// fails at once, requests are still served and told to close their
// connection, each drain command returns when the one drain delay is
// over, and a SIGTERM after it stops ramjetd without waiting the delay
// again.
func TestDrain(t *testing.T) {
	const drainDelay = 4 * time.Second
	bin := buildRamjetd(t)
	member := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }))
	defer member.Close()
	dir := t.TempDir()
	socket := filepath.Join(dir, "admin.sock")
	listen, health := freePort(t), freePort(t)
	config := writeConfig(t, dir, appConfig(listen, health, socket, `"`+member.Listener.Addr().String()+`"`))
	daemon := exec.Command(bin, "--config", config, "--drain-delay", drainDelay.String())
	var logs strings.Builder
	daemon.Stderr = &logs
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	waitFor(t, func() bool { return readyz(health) == http.StatusOK })

	if resp := get(t, listen); resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("before the drain: %d, close %t; want 200 kept alive", resp.StatusCode, resp.Close)
	}
	first := startDrain(t, bin, socket)
	waitFor(t, func() bool { return readyz(health) == http.StatusServiceUnavailable })
	if resp := get(t, listen); resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("a keep-alive request during the drain: %d, close %t; want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	second := startDrain(t, bin, socket)
	for name, drain := range map[string]*drainCommand{"the first drain": first, "a second drain": second} {
		if err := drain.cmd.Wait(); err != nil || !strings.Contains(drain.out.String(), "drained") {
			t.Errorf("%s: %v\n%s", name, err, drain.out.String())
		}
	}
	// The drain delay is over; serving goes on until SIGTERM.
	if resp := get(t, listen); resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("a new connection after the drain: %d, close %t; want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	if status := readyz(health); status != http.StatusServiceUnavailable {
		t.Errorf("/readyz after the drain: %d, want 503", status)
	}

	daemon.Process.Signal(syscall.SIGTERM)
	// A deadline shorter than the drain delay: waiting the delay again
	// would miss it.
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(drainDelay - time.Second):
		t.Fatalf("ramjetd did not stop after SIGTERM within the drain delay; it waits the delay again")
	}
	out := logs.String()
	if n := strings.Count(out, "msg=\"draining: readiness off"); n != 1 {
		t.Errorf("the drain started %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "drain_left=0s") || !strings.Contains(out, "msg=stopped") {
		t.Errorf("the logs lack the shutdown with nothing left of the drain delay:\n%s", out)
	}
}

// drainCommand is a `ramjetd drain` running.
type drainCommand struct {
	cmd *exec.Cmd
	out strings.Builder
}

func startDrain(t *testing.T, bin, socket string) *drainCommand {
	t.Helper()
	d := &drainCommand{cmd: exec.Command(bin, "drain", "--admin-socket", socket)}
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return d
}

// readyz returns the status of GET /readyz, or 0 when it cannot be asked.
func readyz(health string) int {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + health + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// get sends GET / for app.test on a new connection, as HTTP/1.1 (keep-alive
// unless told otherwise), and reads the answer and its body.
func get(t *testing.T, addr string) *http.Response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "served" {
		t.Fatalf("body %q, %v; want %q", body, err, "served")
	}
	return resp
}
