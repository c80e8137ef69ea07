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
	// lastStructure and lastMembers are the configurations of the last
	// calls.
	lastStructure, lastMembers *config.Config
}

func (p *fakePublisher) Structure(_ context.Context, cfg *config.Config, _ map[string][]byte) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.structures++
	p.lastStructure = cfg
	if p.refuse {
		return false, errors.New("refused: tls.cert_file: no such file")
	}
	return true, nil
}

func (p *fakePublisher) Members(_ context.Context, cfg *config.Config, all bool) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.members = append(p.members, all)
	p.lastMembers = cfg
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
	mu        sync.Mutex
	reports   int
	forgets   int
	published []bool
	// block, when set, holds every report until it is closed.
	block chan struct{}
}

func (r *recordingReporter) Report(_ context.Context, o Outcome) {
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports++
	r.published = append(r.published, o.Published)
}

func (r *recordingReporter) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgets++
}

func (r *recordingReporter) forgotten() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forgets
}

func (r *recordingReporter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reports
}

func (r *recordingReporter) lastPublished() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.published) > 0 && r.published[len(r.published)-1]
}

func start(t *testing.T, opts Options) (*Controller, *fakeWatch, *fakePublisher, *recordingReporter) {
	t.Helper()
	return startWith(t, opts, &fakePublisher{}, &recordingReporter{})
}

func startWith(t *testing.T, opts Options, p *fakePublisher, r *recordingReporter) (*Controller, *fakeWatch, *fakePublisher, *recordingReporter) {
	t.Helper()
	w := &fakeWatch{changed: make(chan struct{}, 1)}
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
	// The first build's outcome may reach the reporters after the lead
	// is taken, and be reported too: counts from here are relative.
	c.SetLeader(true)
	eventually(t, "the rebuild on taking the lead", func() bool { return w.count() == 2 })
	eventually(t, "a report as leader", func() bool { return r.count() >= 1 })
	c.SetLeader(false)
	eventually(t, "the rebuild after losing the lead", func() bool { return w.count() == 3 })
	eventually(t, "the reporters forgetting what they reported", func() bool { return r.forgotten() == 1 })
	reported := r.count()
	c.SetLeader(false) // one more rebuild, still not leading
	eventually(t, "the rebuild while not leading", func() bool { return w.count() == 4 })
	time.Sleep(50 * time.Millisecond) // time for a wrong report to arrive
	if r.count() != reported {
		t.Errorf("%d reports after a rebuild while not leading, want %d", r.count(), reported)
	}
	c.SetLeader(true)
	eventually(t, "a report after leading again", func() bool { return r.count() > reported })
}

// TestResyncSendsTheLatestMembers: while ramjetd refuses the configuration,
// rebuilds still send members of the latest translation, and the resync
// sends those too, never the older accepted configuration's (which would
// put back endpoints that are gone).
func TestResyncSendsTheLatestMembers(t *testing.T) {
	c, w, p, _ := start(t, Options{Resync: 20 * time.Millisecond})
	eventually(t, "ready", c.Ready)
	p.set(true)
	w.change()
	eventually(t, "the refused rebuild", func() bool { n, _ := p.counts(); return n == 2 })
	p.mu.Lock()
	latest := p.lastStructure
	p.mu.Unlock()
	before := len(func() []bool { _, m := p.counts(); return m }())
	eventually(t, "resyncs after the refusal", func() bool { _, m := p.counts(); return len(m) >= before+2 })
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastMembers != latest {
		t.Error("the resync sent the members of an older configuration, not of the latest rebuild")
	}
}

// TestEventsAlsoWhenRefused: the reporters hear of a rebuild ramjetd
// refused (Events say why a change has no effect), marked unpublished so
// that the status is not written.
func TestEventsAlsoWhenRefused(t *testing.T) {
	c, w, p, r := start(t, Options{})
	eventually(t, "ready", c.Ready)
	c.SetLeader(true)
	eventually(t, "a report of the published configuration", func() bool { return r.count() == 1 && r.lastPublished() })
	p.set(true)
	w.change()
	eventually(t, "a report of the refused configuration", func() bool { return r.count() == 2 })
	if r.lastPublished() {
		t.Error("a refused configuration was reported as published")
	}
}

// TestSlowReportersDoNotDelayPublication: reporting runs beside the loop;
// rebuilds go on while a reporter is stuck, and the reporter then gets the
// latest outcome only.
func TestSlowReportersDoNotDelayPublication(t *testing.T) {
	r := &recordingReporter{block: make(chan struct{})}
	c, w, p, _ := startWith(t, Options{}, &fakePublisher{}, r)
	eventually(t, "ready", c.Ready)
	c.SetLeader(true)
	for i := range 5 {
		eventually(t, "the previous rebuild", func() bool { n, _ := p.counts(); return n == 2+i })
		w.change()
	}
	eventually(t, "five rebuilds with the reporter stuck", func() bool { n, _ := p.counts(); return n == 7 })
	close(r.block)
	eventually(t, "the reports", func() bool { return r.count() >= 1 })
	time.Sleep(50 * time.Millisecond)
	if n := r.count(); n > 2 {
		t.Errorf("%d reports after the reporter was unstuck, want at most 2 (the one it was in and the latest)", n)
	}
}

// TestUnreachableAtStartIsRetriedSoon: when ramjetd cannot be reached for
// the first configuration, it is tried again within seconds, not after
// --retry.
func TestUnreachableAtStartIsRetriedSoon(t *testing.T) {
	p := &fakePublisher{refuse: true}
	c, _, _, _ := startWith(t, Options{}, p, &recordingReporter{})
	eventually(t, "the first attempt", func() bool { n, _ := p.counts(); return n == 1 })
	p.set(false)
	eventually(t, "ready after the 2 s check", c.Ready)
}
