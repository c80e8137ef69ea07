// Package controller is `ramjet-ingress run`: the loop that turns the
// watched objects into what ramjetd serves. Every rebuild is total and
// level-triggered (DECISIONS.md "Change propagation"): it translates the
// whole current snapshot, publishes the configuration when its structure
// changed (files, ramjet.yaml, reload) and the members of the pools whose
// ready addresses changed, then reports findings as Events and, on the
// leader, the Ingresses' status.
//
// A lone change is rebuilt at once; a burst is coalesced into at most one
// more rebuild per debounce window. An API server outage never removes
// routes: the caches keep the last state, and nothing is published before
// they first synced.
package controller

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Watch is the controller's view of the API server (sources/kube).
type Watch interface {
	// WaitForSync returns once every cache has synced.
	WaitForSync(ctx context.Context) error
	// Changed signals that some watched object changed.
	Changed() <-chan struct{}
	// Snapshot is the current state of the caches. Its error says that a
	// referenced Secret could not be read yet (the snapshot lacks it).
	Snapshot(ctx context.Context) (*snapshot.Snapshot, error)
}

// Publisher sends configurations and members to ramjetd
// (sources/publish).
type Publisher interface {
	// Structure publishes a configuration whose structure changed and
	// reports whether ramjetd reloaded.
	Structure(ctx context.Context, cfg *config.Config, files map[string][]byte) (bool, error)
	// Members sends the pools whose members changed, or every pool.
	Members(ctx context.Context, cfg *config.Config, all bool) (int, error)
	// Restarted reports whether ramjetd restarted since the last accepted
	// reload (it then holds only the file's member seeds).
	Restarted(ctx context.Context) (bool, error)
}

// How often the loop asks ramjetd whether it restarted (a restarted
// ramjetd gets every pool's members at once rather than at the next
// resync), and, before the first configuration is loaded, tries again to
// reach it.
const restartCheck = 2 * time.Second

// How long a call to ramjetd may take: a ramjetd that accepts connections
// but does not answer must not stop the loop. The structure channel (files,
// ramjet.yaml, reload) is not cut by shutdown either: a file ramjetd was
// never asked to validate must not be left behind.
const (
	statusTimeout    = 5 * time.Second
	membersTimeout   = 30 * time.Second
	structureTimeout = 60 * time.Second
)

// Outcome is what one rebuild produced, for the reporters.
type Outcome struct {
	Snapshot *snapshot.Snapshot
	Output   *sources.Output
	// Published is true when ramjetd loaded the configuration. Events are
	// written either way (they say why a change has no effect); the status
	// only for a published configuration.
	Published bool
}

// Reporter receives the outcome of rebuilds on the leader: Events for the
// findings, the status of the Ingresses. Reporters run on a goroutine of
// their own, never delaying publication, and get only the latest outcome
// when they fall behind; the last outcome is reported again every resync
// interval, which retries what failed.
type Reporter interface {
	Report(ctx context.Context, o Outcome)
}

// Options configure the controller.
type Options struct {
	Translate sources.Options
	// Base holds the server section (listeners, health, admin socket).
	Base *config.Server
	// Debounce is the window that coalesces bursts of changes.
	Debounce time.Duration
	// Resync is the interval at which every pool's members are sent again.
	Resync time.Duration
	// Retry is the interval at which a refused configuration is tried
	// again when nothing changes.
	Retry time.Duration
	Log   *slog.Logger
}

// Controller runs the rebuild loop.
type Controller struct {
	opts      Options
	watch     Watch
	publisher Publisher
	reporters []Reporter
	metrics   *Metrics
	log       *slog.Logger

	// ready is set once the first configuration is loaded (/readyz).
	ready atomic.Bool
	// lastBuild is when the last rebuild started; dirtySince is when the
	// first change not yet rebuilt was seen (zero when none).
	lastBuild, dirtySince time.Time
	// failing is true while ramjetd refuses the configuration, cannot be
	// reached or did not take members, so that the retry timer rebuilds.
	failing bool
	// latest is the configuration of the last rebuild, accepted or not:
	// the resync sends its members (a pool ramjetd lacks fails alone).
	latest *config.Config
	// logged holds what was last logged about flags and ignored
	// Ingresses, so that a rebuild logs only what changed.
	logged logState
	// leader is true while this replica holds the Lease: only the leader
	// reports (Events, status). leaderChanged asks for a rebuild when it
	// changes, so that a new leader reports at once.
	leader        atomic.Bool
	leaderChanged chan struct{}
	// outcomes carries the latest outcome to the reporting goroutine, which
	// reports it while this replica leads.
	outcomes chan Outcome
}

// New returns a controller; reporters run only while it is the leader
// (see SetLeader).
func New(opts Options, watch Watch, publisher Publisher, metrics *Metrics, reporters ...Reporter) *Controller {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Controller{opts: opts, watch: watch, publisher: publisher, reporters: reporters, metrics: metrics,
		log: opts.Log, leaderChanged: make(chan struct{}, 1), outcomes: make(chan Outcome, 1)}
}

// Ready reports whether the first configuration is loaded.
func (c *Controller) Ready() bool { return c.ready.Load() }

// Run waits for the caches, publishes the first configuration and then
// rebuilds on every change until ctx ends; it returns once its reporting
// goroutine stopped too. It returns the reason the caches never synced, or
// nil when ctx ended.
func (c *Controller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.reportLoop(ctx) })
	if err := c.watch.WaitForSync(ctx); err != nil {
		return fmt.Errorf("waiting for the caches: %w", err)
	}
	c.log.Info("caches synced; publishing the first configuration")
	c.dirtySince = time.Now()
	c.rebuild(ctx)
	resync := time.NewTicker(c.opts.Resync)
	defer resync.Stop()
	restarts := time.NewTicker(restartCheck)
	defer restarts.Stop()
	retry := time.NewTicker(c.opts.Retry)
	defer retry.Stop()
	debounce := time.NewTimer(0)
	<-debounce.C
	pending := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.watch.Changed():
			if c.dirtySince.IsZero() {
				c.dirtySince = time.Now()
			}
			if wait := c.opts.Debounce - time.Since(c.lastBuild); wait > 0 {
				if !pending {
					debounce.Reset(wait)
					pending = true
				}
				continue
			}
			c.rebuild(ctx)
		case <-c.leaderChanged:
			c.rebuild(ctx)
		case <-debounce.C:
			pending = false
			c.rebuild(ctx)
		case <-retry.C:
			if c.failing {
				c.log.Info("retrying the configuration ramjetd did not accept")
				c.rebuild(ctx)
			}
		case <-resync.C:
			c.resync(ctx)
		case <-restarts.C:
			c.checkRestart(ctx)
		}
	}
}

// checkRestart sends every pool's members to a ramjetd that restarted;
// before the first configuration is loaded, it tries again to publish it.
func (c *Controller) checkRestart(ctx context.Context) {
	if !c.ready.Load() {
		if c.failing {
			c.rebuild(ctx)
		}
		return
	}
	sctx, cancel := context.WithTimeout(ctx, statusTimeout)
	restarted, _ := c.publisher.Restarted(sctx)
	cancel()
	if restarted {
		c.log.Info("ramjetd restarted; sending every pool's members")
		c.resync(ctx)
	}
}

// SetLeader tells the loop that this replica became, or stopped being, the
// leader; a new leader rebuilds at once to report.
func (c *Controller) SetLeader(leader bool) {
	c.leader.Store(leader)
	select {
	case c.leaderChanged <- struct{}{}:
	default:
	}
}

// rebuild translates the current snapshot, publishes what changed and
// hands the outcome to the reporters.
func (c *Controller) rebuild(ctx context.Context) {
	seen := c.dirtySince
	c.lastBuild, c.dirtySince = time.Now(), time.Time{}
	snap, err := c.watch.Snapshot(ctx)
	snapped := time.Now()
	if err != nil {
		if !c.ready.Load() {
			// Publishing without a Secret would refuse basic-auth Ingresses
			// or serve the fake certificate: the first configuration waits
			// (the watch signals again when it retries the read).
			c.log.Warn("waiting for Secrets before the first configuration", "error", err)
			c.dirtySince = seen
			return
		}
		c.log.Warn("publishing without Secrets that could not be read; they keep their last known state", "error", err)
	}
	out := sources.Translate(snap, c.opts.Base, c.opts.Translate)
	c.metrics.observeObjects(out.Objects, len(out.Ignored))
	c.logged.update(c.log, out)
	c.latest = out.Config
	phases := phases{snapshot: snapped.Sub(c.lastBuild), translate: time.Since(snapped)}
	published := c.publish(ctx, out, seen, phases)
	c.queueReport(Outcome{Snapshot: snap, Output: out, Published: published})
}

// phases are the durations of a rebuild's steps (the debug log).
type phases struct {
	snapshot, translate, structure, members time.Duration
}

// publish sends the structure, then the members, and reports whether
// ramjetd loaded the configuration.
func (c *Controller) publish(ctx context.Context, out *sources.Output, seen time.Time, ph phases) bool {
	start := time.Now()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), structureTimeout)
	reloaded, err := c.publisher.Structure(sctx, out.Config, out.Files)
	cancel()
	ph.structure = time.Since(start)
	if err != nil {
		c.failed("the configuration was not loaded", err)
		c.metrics.reloadFailures.Inc()
		// The pools ramjetd already has still follow their endpoints (a
		// pool the refused configuration adds is not there: its update
		// fails and waits for the next accepted reload).
		c.sendMembers(ctx, out.Config, false)
		return false
	}
	first := !c.ready.Swap(true)
	if first {
		c.log.Info("first configuration loaded; ready")
	}
	// The first configuration sends every pool: ramjetd may hold members
	// of an earlier controller that the file's seeds do not replace.
	start = time.Now()
	sent, err := c.sendMembers(ctx, out.Config, first)
	ph.members = time.Since(start)
	if err != nil {
		c.failed("members were not sent", err)
	} else {
		c.failing = false
		c.metrics.synced(time.Now())
	}
	if (reloaded || sent > 0) && !seen.IsZero() {
		c.metrics.publishLatency.Observe(time.Since(seen).Seconds())
	}
	// The phases' durations (test/bench/controller.sh reads them).
	c.log.Debug("rebuilt", "reloaded", reloaded, "pools sent", sent, "summary", out.Summary(),
		"snapshot", ph.snapshot, "translate", ph.translate, "structure", ph.structure, "members", ph.members)
	return true
}

// sendMembers sends the pools whose members changed (all: every pool).
func (c *Controller) sendMembers(ctx context.Context, cfg *config.Config, all bool) (int, error) {
	mctx, cancel := context.WithTimeout(ctx, membersTimeout)
	defer cancel()
	sent, err := c.publisher.Members(mctx, cfg, all)
	c.metrics.memberUpdate(sent, err)
	return sent, err
}

func (c *Controller) failed(what string, err error) {
	c.failing = true
	c.metrics.syncs.WithLabelValues("error").Inc()
	c.log.Error(what+"; the last accepted configuration keeps serving", "error", err)
}

// resync sends every pool's members of the latest rebuild again: it
// repairs a missed update and a ramjetd that restarted.
func (c *Controller) resync(ctx context.Context) {
	if c.latest == nil || !c.ready.Load() {
		return
	}
	if _, err := c.sendMembers(ctx, c.latest, true); err != nil {
		c.log.Warn("member resync failed", "error", err)
		return
	}
	if !c.failing {
		c.metrics.alive(time.Now())
	}
}

// queueReport hands an outcome to the reporting goroutine, replacing one it
// has not taken yet (the loop is its only sender).
func (c *Controller) queueReport(o Outcome) {
	select {
	case <-c.outcomes:
	default:
	}
	c.outcomes <- o
}

// reportLoop runs the reporters on the latest outcome, and on the last one
// again every resync interval, while this replica leads, until ctx ends.
// When it stops leading, reporters that remember what they reported
// forget it, so that leading again reports afresh, as a new leader would.
func (c *Controller) reportLoop(ctx context.Context) {
	again := time.NewTicker(c.opts.Resync)
	defer again.Stop()
	var last *Outcome
	reporting := false
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-c.outcomes:
			last = &o
		case <-again.C:
			if last == nil {
				continue
			}
		}
		if !c.leader.Load() {
			if reporting {
				c.forget()
				reporting = false
			}
			continue
		}
		reporting = true
		for _, r := range c.reporters {
			r.Report(ctx, *last)
		}
	}
}

// forgetter is a reporter that remembers what it reported (Events).
type forgetter interface{ Forget() }

func (c *Controller) forget() {
	for _, r := range c.reporters {
		if f, ok := r.(forgetter); ok {
			f.Forget()
		}
	}
}
