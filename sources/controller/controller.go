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

// restartCheck is how often the loop asks ramjetd whether it restarted:
// a restarted ramjetd gets every pool's members at once rather than at the
// next resync.
const restartCheck = 2 * time.Second

// Reporter receives the outcome of a rebuild on the leader: Events for the
// findings, the status of the Ingresses.
type Reporter interface {
	Report(ctx context.Context, snap *snapshot.Snapshot, result *sources.Output)
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

	// ready is set once the first configuration is loaded and its members
	// sent (/readyz).
	ready atomic.Bool
	// lastBuild is when the last rebuild started; dirtySince is when the
	// first change not yet rebuilt was seen (zero when none).
	lastBuild, dirtySince time.Time
	// failing is true while ramjetd refuses the configuration or cannot be
	// reached, so that the retry timer rebuilds.
	failing bool
	// last is the configuration last published, whose members the resync
	// sends again.
	last *config.Config
	// leader is true while this replica holds the Lease: only the leader
	// reports (Events, status). leaderChanged asks for a rebuild when it
	// changes, so that a new leader reports at once.
	leader        atomic.Bool
	leaderChanged chan struct{}
}

// New returns a controller; reporters run only while it is the leader
// (see SetLeader).
func New(opts Options, watch Watch, publisher Publisher, metrics *Metrics, reporters ...Reporter) *Controller {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Controller{opts: opts, watch: watch, publisher: publisher, reporters: reporters, metrics: metrics,
		log: opts.Log, leaderChanged: make(chan struct{}, 1)}
}

// Ready reports whether the first configuration is loaded.
func (c *Controller) Ready() bool { return c.ready.Load() }

// Run waits for the caches, publishes the first configuration and then
// rebuilds on every change until ctx ends. It returns the reason the caches
// never synced, or nil when ctx ended.
func (c *Controller) Run(ctx context.Context) error {
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
			if restarted, _ := c.publisher.Restarted(ctx); restarted {
				c.log.Info("ramjetd restarted; sending every pool's members")
				c.resync(ctx)
			}
		}
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

// rebuild translates the current snapshot and publishes what changed.
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
	translated := time.Now()
	c.metrics.observeObjects(out.Objects)
	for _, p := range out.Problems {
		c.log.Warn("flag problem", "problem", p)
	}
	reloaded, err := c.publisher.Structure(ctx, out.Config, out.Files)
	structured := time.Now()
	if err != nil {
		c.failed("the configuration was not loaded", err)
		c.metrics.reloadFailures.Inc()
		// The pools ramjetd already has still follow their endpoints (a
		// pool the refused configuration adds is not there: its update
		// fails and waits for the next accepted reload).
		sent, err := c.publisher.Members(ctx, out.Config, false)
		c.metrics.memberUpdate(sent, err)
		return
	}
	sent, err := c.publisher.Members(ctx, out.Config, !c.ready.Load())
	published := time.Now()
	c.metrics.memberUpdate(sent, err)
	if err != nil {
		c.failed("members were not sent", err)
		return
	}
	c.failing, c.last = false, out.Config
	c.metrics.synced(time.Now())
	if (reloaded || sent > 0) && !seen.IsZero() {
		c.metrics.publishLatency.Observe(time.Since(seen).Seconds())
	}
	if !c.ready.Swap(true) {
		c.log.Info("first configuration loaded; ready")
	}
	// The phases' durations (test/bench/controller.sh reads them).
	c.log.Debug("rebuilt", "reloaded", reloaded, "pools sent", sent, "summary", out.Summary(),
		"snapshot", snapped.Sub(c.lastBuild), "translate", translated.Sub(snapped),
		"structure", structured.Sub(translated), "members", published.Sub(structured))
	if c.leader.Load() {
		for _, r := range c.reporters {
			r.Report(ctx, snap, out)
		}
	}
}

func (c *Controller) failed(what string, err error) {
	c.failing = true
	c.metrics.syncs.WithLabelValues("error").Inc()
	c.log.Error(what+"; the last accepted configuration keeps serving", "error", err)
}

// resync sends every pool's members again: it repairs a missed update and
// a ramjetd that restarted.
func (c *Controller) resync(ctx context.Context) {
	if c.last == nil {
		return
	}
	sent, err := c.publisher.Members(ctx, c.last, true)
	c.metrics.memberUpdate(sent, err)
	if err != nil {
		c.log.Warn("member resync failed", "error", err)
	}
}
