package harness

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Program is a program running inside a Network's namespace (started with
// `ip netns exec`), its output kept in a log file.
type Program struct {
	// Name names the program in errors and in its log's file name.
	Name string
	// LogPath is the file holding its output.
	LogPath string

	p *process
}

// Run starts the program name of the test binaries' folder (BinDir) inside
// n's namespace with args; it listens on addresses of AddAddr. The program
// is stopped (SIGTERM, then SIGKILL after 5 s) when t ends, and its log is
// printed when t failed.
func (n *Network) Run(t testing.TB, name string, args ...string) *Program {
	t.Helper()
	bin, err := BinDir()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	prog, err := n.Start(name, filepath.Join(bin, name), filepath.Join(t.TempDir(), name+".log"), args...)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() {
		prog.Stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, tail(prog.Log(), 60))
		}
	})
	return prog
}

// Start is Run for a caller without a testing.TB: it starts the program at
// path, its output appended to logPath; the caller stops it.
func (n *Network) Start(name, path, logPath string, args ...string) (*Program, error) {
	p, err := startProcess(name, "ip", logPath, append([]string{"netns", "exec", n.Name, path}, args...)...)
	if err != nil {
		return nil, err
	}
	return &Program{Name: name, LogPath: logPath, p: p}, nil
}

// WaitHTTP waits until GET url (an address of the network) answers status
// want, failing t when the program exits first or timeout passes.
func (p *Program) WaitHTTP(t testing.TB, timeout time.Duration, url string, want int) {
	t.Helper()
	err := p.p.waitReady(timeout, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultTransport.RoundTrip(req) // redirects not followed
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("GET %s: %s, want %d", url, resp.Status, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("harness: %v\n%s log:\n%s", err, p.Name, tail(p.Log(), 40))
	}
}

// Log returns the program's output so far.
func (p *Program) Log() string {
	data, _ := os.ReadFile(p.LogPath)
	return string(data)
}

// Stop stops the program (SIGTERM, then SIGKILL after 5 s) and returns once
// it has ended.
func (p *Program) Stop() { p.p.stop(5 * time.Second) }
