package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// What a series changes, and so which channel carries it.
const (
	structural = "structure" // a new or changed route: files, ramjet.yaml, reload
	members    = "members"   // an endpoint: the member channel, no reload
)

// series is one timed run of changes.
type series struct {
	name    string
	channel string // structural or members
	lone    bool   // spaced by more than the debounce window
	samples []sample
	failed  int
	from    time.Time
}

// sample is one change: when its write started, how long the API call
// took and how long until ramjetd served it.
type sample struct {
	write    time.Time
	rtt      time.Duration
	latency  time.Duration
	answered time.Time
}

// loadResult is the time the load of a size took.
type loadResult struct {
	created            int
	createdIn          time.Duration // the API calls
	lastServed         time.Duration // start to the last created route answering
	allServed          time.Duration // start to every route checked
	rebuildsDuringLoad int
}

// rollout is one rolling replacement of the rolled Service's endpoints.
type rollout struct {
	series
	genBefore, genAfter uint64
	reloads, rebuilds   int     // the controller's, from its log
	memberPUTs          float64 // ramjet_ingress_member_updates_total{result="ok"}
}

// measureSize loads size routes and runs every series and rollout.
func (b *bench) measureSize(ctx context.Context, size int) (*sizeResult, error) {
	r := &sizeResult{routes: size}
	if size > b.loaded {
		b.progress("loading %d routes", size-b.loaded)
		var err error
		if r.load, err = b.load(ctx, size); err != nil {
			return r, err
		}
		b.progress("%d routes loaded: created in %s, all served after %s", size, round(r.load.createdIn), round(r.load.allServed))
	}
	if err := b.settle(ctx); err != nil {
		return r, err
	}
	from, mark := time.Now(), b.markCPU()
	before, err := b.metrics(ctx)
	if err != nil {
		return r, err
	}
	r.ingresses = int(before[`ramjet_ingress_ingresses{state="served"}`])
	r.rejected = int(before[`ramjet_ingress_ingresses{state="rejected"}`])

	var created []string
	create := func(name string, lone bool) error {
		s, err := b.series(ctx, name, structural, lone, func() (string, string, error) {
			k := len(created)
			ingName := fmt.Sprintf("n%d-%d", size, k)
			created = append(created, ingName)
			return ingName + domain, backendName(k % services),
				b.createIngress(ctx, ingress(ingName, ingName+domain, serviceName(k%services)))
		})
		r.series = append(r.series, s)
		return err
	}
	if err := create("new Ingress, lone", true); err != nil {
		return r, err
	}
	s, err := b.series(ctx, "backend update, lone", structural, true, func() (string, string, error) {
		want, err := b.moveUpdated(ctx)
		return updHost, want, err
	})
	r.series = append(r.series, s)
	if err != nil {
		return r, err
	}
	if err := create("new Ingress, back to back", false); err != nil {
		return r, err
	}
	b.progress("removing the %d Ingresses the series created", len(created))
	if err := b.deleteIngresses(ctx, created); err != nil {
		return r, err
	}
	for _, name := range created {
		if _, err := b.waitFor(ctx, time.Minute, func() bool {
			status, _ := b.get(ctx, name+domain)
			return status == http.StatusNotFound
		}); err != nil {
			return r, fmt.Errorf("%s is still served after its deletion: %w", name, err)
		}
	}
	for _, lone := range []bool{true, false} {
		if err := b.settle(ctx); err != nil {
			return r, err
		}
		ro, err := b.rollout(ctx, lone)
		r.rollouts = append(r.rollouts, ro)
		if err != nil {
			return r, err
		}
	}
	after, err := b.metrics(ctx)
	if err != nil {
		return r, err
	}
	r.cpu = mark.usage(b.markCPU())
	r.publish = publishHistogram(after).sub(publishHistogram(before))
	r.memory = b.memory()
	r.rebuilds = b.rebuilds(from, time.Now())
	b.progress("timing the parts of a reload")
	r.costs = b.measureCosts(ctx)
	return r, nil
}

// load creates the routes up to size and waits until ramjetd serves every
// one.
func (b *bench) load(ctx context.Context, size int) (loadResult, error) {
	first := b.loaded
	res := loadResult{created: size - first}
	start := time.Now()
	err := b.parallel(ctx, size-first, func(i int) error {
		j := first + i
		return b.createIngress(ctx, ingress(routeName(j), routeHost(j), serviceName(j%services)))
	})
	res.createdIn = time.Since(start)
	if err != nil {
		return res, err
	}
	b.loaded = size
	at, err := b.waitAnswer(ctx, routeHost(size-1), backendName((size-1)%services), 5*time.Minute)
	if err != nil {
		return res, fmt.Errorf("the last route loaded: %w", err)
	}
	res.lastServed = at.Sub(start)
	for j := first; j < size; j++ {
		if _, err := b.waitAnswer(ctx, routeHost(j), backendName(j%services), time.Minute); err != nil {
			return res, fmt.Errorf("route %s: %w", routeName(j), err)
		}
	}
	res.allServed = time.Since(start)
	res.rebuildsDuringLoad = len(b.rebuilds(start, time.Now()))
	return res, nil
}

// series times b.opts.changes changes: change writes one and returns the
// Host to ask and the backend that must answer.
func (b *bench) series(ctx context.Context, name, channel string, lone bool, change func() (host, want string, err error)) (*series, error) {
	s := &series{name: name, channel: channel, lone: lone, from: time.Now()}
	b.progress("%s: %d changes", name, b.opts.changes)
	err := b.timeChanges(ctx, s, b.opts.changes, func(int) (func() bool, error) {
		host, want, err := change()
		return func() bool {
			status, body := b.get(ctx, host)
			return status == http.StatusOK && body == want
		}, err
	})
	return s, err
}

// timeChanges times n changes into s: change writes the i-th and returns
// the check that ramjetd serves it, called every b.opts.poll. Lone changes
// wait b.opts.gap after the previous one was served; the others are
// written as soon as it was.
func (b *bench) timeChanges(ctx context.Context, s *series, n int, change func(i int) (served func() bool, err error)) error {
	for i := range n {
		if s.lone {
			if err := sleep(ctx, b.opts.gap); err != nil {
				return err
			}
		}
		start := time.Now()
		served, err := change(i)
		if err != nil {
			return err
		}
		rtt := time.Since(start)
		at, err := b.waitFor(ctx, b.opts.answerTimeout, served)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.failed++
			continue
		}
		s.samples = append(s.samples, sample{write: start, rtt: rtt, latency: at.Sub(start), answered: at})
	}
	return nil
}

// rollout replaces the rolled Service's endpoints one at a time and times
// each until ramjetd's pool has the new member instead of the old one.
func (b *bench) rollout(ctx context.Context, lone bool) (rollout, error) {
	name := "rollout, back to back"
	if lone {
		name = "rollout, lone"
	}
	ro := rollout{series: series{name: name, channel: members, lone: lone, from: time.Now()}}
	b.progress("%s: %d endpoints replaced one by one", name, b.opts.endpoints)
	st, err := b.admin.Status(ctx)
	if err != nil {
		return ro, err
	}
	ro.genBefore = st.Generation
	before, err := b.metrics(ctx)
	if err != nil {
		return ro, err
	}
	err = b.timeChanges(ctx, &ro.series, b.opts.endpoints, func(i int) (func() bool, error) {
		old, repl, err := b.replaceEndpoint(ctx, i)
		return func() bool {
			p, err := b.admin.Pool(ctx, b.roll.pool)
			return err == nil && hasMember(p, repl) && !hasMember(p, old)
		}, err
	})
	if err != nil {
		return ro, err
	}
	b.roll.set = 1 - b.roll.set
	// Let a last rebuild that could reload finish before counting.
	if err := b.settle(ctx); err != nil {
		return ro, err
	}
	if st, err = b.admin.Status(ctx); err != nil {
		return ro, err
	}
	ro.genAfter = st.Generation
	after, err := b.metrics(ctx)
	if err != nil {
		return ro, err
	}
	ro.memberPUTs = after[`ramjet_ingress_member_updates_total{result="ok"}`] - before[`ramjet_ingress_member_updates_total{result="ok"}`]
	for _, rb := range b.rebuilds(ro.from, time.Now()) {
		ro.rebuilds++
		if rb.Reloaded {
			ro.reloads++
		}
	}
	return ro, nil
}

func hasMember(p admin.Pool, addr string) bool {
	want := net.JoinHostPort(addr, strconv.Itoa(harness.BackendPort))
	return slices.ContainsFunc(p.Members, func(m admin.Member) bool { return m.Address == want })
}

// settle waits until the controller has not synchronised for a second
// (nothing left to rebuild), and at least b.opts.gap.
func (b *bench) settle(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	last, quietSince := -1.0, time.Now()
	for {
		m, err := b.metrics(ctx)
		if err != nil {
			return err
		}
		syncs := m[`ramjet_ingress_syncs_total{result="ok"}`] + m[`ramjet_ingress_syncs_total{result="error"}`]
		if syncs != last {
			last, quietSince = syncs, time.Now()
		}
		if quiet := time.Since(quietSince); quiet >= time.Second && quiet >= b.opts.gap {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the controller kept rebuilding for two minutes with nothing changing")
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitAnswer polls ramjetd with host until the backend want answers, and
// returns when it did.
func (b *bench) waitAnswer(ctx context.Context, host, want string, timeout time.Duration) (time.Time, error) {
	var status int
	var body string
	at, err := b.waitFor(ctx, timeout, func() bool {
		status, body = b.get(ctx, host)
		return status == http.StatusOK && body == want
	})
	if err != nil {
		return at, fmt.Errorf("%s: want %s, last answer %d %q: %w", host, want, status, body, err)
	}
	return at, nil
}

// waitFor calls ok every b.opts.poll until it returns true (and returns
// when) or timeout passes.
func (b *bench) waitFor(ctx context.Context, timeout time.Duration, ok func() bool) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(b.opts.poll)
	defer tick.Stop()
	for {
		if ok() {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Now(), fmt.Errorf("not after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return time.Now(), ctx.Err()
		case <-tick.C:
		}
	}
}

// get asks ramjetd for http://host/ and returns the status and the body
// without its final newline (0 when it did not answer).
func (b *bench) get(ctx context.Context, host string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/", nil)
	if err != nil {
		return 0, ""
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, strings.TrimSuffix(string(body), "\n")
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
