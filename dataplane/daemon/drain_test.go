package daemon

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestDrainBeforeStart checks a drain that the admin API starts while the
// daemon is still binding its listeners (the admin socket is bound first):
// readiness stays off, and the listeners bound after it tell their clients
// to close.
func TestDrainBeforeStart(t *testing.T) {
	b := startBackend(t, echo("b"))
	dir := t.TempDir()
	td := &testDaemon{dir: dir, config: filepath.Join(dir, "ramjet.yaml")}
	td.write(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	d, err := New(Options{ConfigPath: td.config, DrainDelay: time.Hour, Log: testLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	td.Daemon = d
	over := d.Drain()
	if err := d.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(d.closeAll)
	if status, _, _ := rawGet(t, d.bound.get("health"), "localhost", "/readyz"); status != http.StatusServiceUnavailable {
		t.Errorf("/readyz after a drain and Start: %d, want 503", status)
	}
	resp := rawRequest(t, d.bound.get("http"), "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("a keep-alive request: %d, close %t; want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	if again := d.Drain(); again != over {
		t.Error("a second Drain started another drain, want the first one's channel")
	}
	select {
	case <-over:
		t.Error("the drain of an hour is over at once")
	default:
	}
}
