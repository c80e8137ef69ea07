package controller

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// These tests drive the loop with a scripted watch and publisher: its
// timing rules (a lone change at once, bursts coalesced per window, retry
// after a refusal, readiness, resync) are the loop's own logic. The real
// watch and publisher are tested against an API server and ramjetd in
// test/e2e.

type fakeWatch struct {
	changed chan struct{}
	mu      sync.Mutex
	builds  int
}

func (w *fakeWatch) WaitForSync(context.Context) error { return nil }
func (w *fakeWatch) Changed() <-chan struct{}          { return w.changed }
func (w *fakeWatch) Snapshot(context.Context) (*snapshot.Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.builds++
	return snapshot.New(), nil
}

func (w *fakeWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.builds
}

func (w *fakeWatch) change() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

type fakePublisher struct {
	mu         sync.Mutex
	structures int
	members    []bool // the all flag of each Members call
	refuse     bool
}

func (p *fakePublisher) Structure(context.Context, *config.Config, map[string][]byte) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.structures++
	if p.refuse {
		return false, errors.New("refused: tls.cert_file: no such file")
	}
	return true, nil
}

func (p *fakePublisher) Members(_ context.Context, _ *config.Config, all bool) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.members = append(p.members, all)
	return 1, nil
}

func (p *fakePublisher) Restarted(context.Context) (bool, error) { return false, nil }

func (p *fakePublisher) set(refuse bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = refuse
}

func (p *fakePublisher) counts() (int, []bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.structures, append([]bool(nil), p.members...)
}

type recordingReporter struct {
	mu      sync.Mutex
	reports int
}

func (r *recordingReporter) Report(context.Context, *snapshot.Snapshot, *sources.Output) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports++
}

func (r *recordingReporter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reports
}

func start(t *testing.T, opts Options) (*Controller, *fakeWatch, *fakePublisher, *recordingReporter) {
	t.Helper()
	w := &fakeWatch{changed: make(chan struct{}, 1)}
	p := &fakePublisher{}
	r := &recordingReporter{}
	opts.Base = &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}}
	opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts.Resync == 0 {
		opts.Resync = time.Hour
	}
	if opts.Retry == 0 {
		opts.Retry = time.Hour
	}
	c := New(opts, w, p, NewMetrics(), r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c, w, p, r
}

// eventually waits up to 5 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestFirstBuildMakesReady(t *testing.T) {
	c, w, p, _ := start(t, Options{Debounce: time.Hour})
	eventually(t, "ready", c.Ready)
	structures, members := p.counts()
	if w.count() != 1 || structures != 1 || len(members) != 1 || !members[0] {
		t.Errorf("builds %d, structures %d, members %v; want one build sending every pool", w.count(), structures, members)
	}
	if got := testutil.ToFloat64(c.metrics.syncs.WithLabelValues("ok")); got != 1 {
		t.Errorf("syncs ok = %v, want 1", got)
	}
}

func TestLoneChangeIsImmediate(t *testing.T) {
	c, w, _, _ := start(t, Options{Debounce: 50 * time.Millisecond})
	eventually(t, "ready", c.Ready)
	time.Sleep(60 * time.Millisecond) // past the first build's window
	w.change()
	eventually(t, "the change's rebuild", func() bool { return w.count() == 2 })
}

// TestBurstIsCoalesced: changes within one window after a rebuild cost at
// most one more rebuild, at the end of the window.
func TestBurstIsCoalesced(t *testing.T) {
	c, w, _, _ := start(t, Options{Debounce: 300 * time.Millisecond})
	eventually(t, "ready", c.Ready)
	for range 20 {
		w.change()
		time.Sleep(5 * time.Millisecond)
	}
	eventually(t, "the coalesced rebuild", func() bool { return w.count() == 2 })
	time.Sleep(400 * time.Millisecond)
	if got := w.count(); got != 2 {
		t.Errorf("%d builds after a burst within one window, want 2 (the first and one coalesced)", got)
	}
}

// TestRefusalIsRetried: a configuration ramjetd refuses is tried again
// after the retry interval, without any change, and is not ready until it
// is accepted.
func TestRefusalIsRetried(t *testing.T) {
	w := &fakeWatch{changed: make(chan struct{}, 1)}
	p := &fakePublisher{refuse: true}
	opts := Options{Debounce: time.Hour, Resync: time.Hour, Retry: 50 * time.Millisecond,
		Base: &config.Server{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := New(opts, w, p, NewMetrics())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Run(ctx) }()
	eventually(t, "a retry", func() bool { n, _ := p.counts(); return n >= 3 })
	if c.Ready() {
		t.Fatal("ready while ramjetd refuses the configuration")
	}
	if got := testutil.ToFloat64(c.metrics.reloadFailures); got < 3 {
		t.Errorf("reload failures = %v, want at least 3", got)
	}
	p.set(false)
	eventually(t, "ready after the retry is accepted", c.Ready)
}

func TestResyncSendsEveryPool(t *testing.T) {
	c, _, p, _ := start(t, Options{Debounce: time.Hour, Resync: 30 * time.Millisecond})
	eventually(t, "ready", c.Ready)
	eventually(t, "two resyncs", func() bool { _, m := p.counts(); return len(m) >= 3 })
	_, members := p.counts()
	for i, all := range members {
		if !all {
			t.Errorf("members call %d sent only changed pools; a resync sends all", i)
		}
	}
}

// TestOnlyTheLeaderReports: reporters (Events, status) run while leader,
// and becoming the leader rebuilds at once.
func TestOnlyTheLeaderReports(t *testing.T) {
	c, w, _, r := start(t, Options{Debounce: time.Hour})
	eventually(t, "ready", c.Ready)
	if r.count() != 0 {
		t.Fatalf("%d reports before leading", r.count())
	}
	c.SetLeader(true)
	eventually(t, "a report as leader", func() bool { return r.count() == 1 })
	if w.count() != 2 {
		t.Errorf("%d builds, want 2: becoming the leader rebuilds", w.count())
	}
	c.SetLeader(false)
	eventually(t, "the rebuild after losing the lead", func() bool { return w.count() == 3 })
	if r.count() != 1 {
		t.Errorf("%d reports after losing the lead, want 1", r.count())
	}
}
