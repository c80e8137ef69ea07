package publish

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TestMembers runs member updates against a real ramjetd serving the api
// pools p_web and p_api and the static pool p_static. The steps share one
// Publisher: each row says what the configuration holds, what Members
// sends, and what ramjetd then has.
func TestMembers(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	a, b, c := backend(t, "A"), backend(t, "B"), backend(t, "C")
	cfg, files := r.config(site{web: []string{a}, api: []string{a}})
	cfg.Tenants[core.TenantName].Pools["p_static"] = &config.Pool{Members: members([]string{c})}
	if _, err := r.pub.Structure(ctx, cfg, files); err != nil {
		t.Fatal(err)
	}

	// pools builds the configuration of a step: the served one with
	// other members, and pools added or removed.
	type pool struct {
		name    string
		members []string
		static  bool
	}
	steps := []struct {
		name     string
		pools    []pool
		all      bool
		wantSent int
		// wantErrs are the pools whose update fails, with a piece of
		// the reason.
		wantErrs map[string]string
		// want are the members ramjetd then has, by pool.
		want map[string][]string
	}{
		{
			name:     "first call sends every api pool",
			pools:    []pool{{"p_web", []string{a}, false}, {"p_api", []string{a}, false}, {"p_static", []string{c}, true}},
			wantSent: 2,
			want:     map[string][]string{"p_web": {a}, "p_api": {a}, "p_static": {c}},
		},
		{
			name:  "nothing changed sends nothing",
			pools: []pool{{"p_web", []string{a}, false}, {"p_api", []string{a}, false}, {"p_static", []string{c}, true}},
			want:  map[string][]string{"p_web": {a}, "p_api": {a}},
		},
		{
			name:     "one pool changed",
			pools:    []pool{{"p_web", []string{a, b}, false}, {"p_api", []string{a}, false}, {"p_static", []string{c}, true}},
			wantSent: 1,
			want:     map[string][]string{"p_web": {a, b}, "p_api": {a}},
		},
		{
			name:     "all sends every api pool, never a static one",
			pools:    []pool{{"p_web", []string{a, b}, false}, {"p_api", []string{a}, false}, {"p_static", []string{a}, true}},
			all:      true,
			wantSent: 2,
			want:     map[string][]string{"p_web": {a, b}, "p_api": {a}, "p_static": {c}},
		},
		{
			name:     "no members",
			pools:    []pool{{"p_web", []string{a, b}, false}, {"p_api", nil, false}},
			wantSent: 1,
			want:     map[string][]string{"p_web": {a, b}, "p_api": {}},
		},
		{
			name:     "a pool ramjetd does not have fails alone",
			pools:    []pool{{"p_web", []string{b}, false}, {"p_api", nil, false}, {"p_new", []string{c}, false}},
			wantSent: 1,
			wantErrs: map[string]string{"p_new": "does not have this pool"},
			want:     map[string][]string{"p_web": {b}, "p_api": {}},
		},
		{
			name:     "and is tried again",
			pools:    []pool{{"p_web", []string{b}, false}, {"p_api", nil, false}, {"p_new", []string{c}, false}},
			wantErrs: map[string]string{"p_new": "404"},
		},
		{
			name:  "a pool left out is forgotten",
			pools: []pool{{"p_web", []string{b}, false}},
		},
		{
			name:     "and sent again when it comes back",
			pools:    []pool{{"p_web", []string{b}, false}, {"p_api", nil, false}},
			wantSent: 1,
			want:     map[string][]string{"p_web": {b}, "p_api": {}},
		},
		{
			name:     "a static pool in ramjetd that the configuration makes api",
			pools:    []pool{{"p_web", []string{b}, false}, {"p_api", nil, false}, {"p_static", []string{a}, false}},
			wantSent: 0,
			wantErrs: map[string]string{"p_static": "409"},
			want:     map[string][]string{"p_static": {c}},
		},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			pools := map[string]*config.Pool{}
			for _, p := range step.pools {
				pools[p.name] = &config.Pool{MembersFrom: config.MembersAPI, Members: members(p.members)}
				if p.static {
					pools[p.name].MembersFrom = config.MembersStatic
				}
			}
			cfg := &config.Config{Server: *r.base, Tenants: map[string]*config.Tenant{core.TenantName: {Pools: pools}}}
			sent, err := r.pub.Members(ctx, cfg, step.all)
			if sent != step.wantSent {
				t.Errorf("sent = %d, want %d", sent, step.wantSent)
			}
			var failed []string
			for _, e := range unjoin(err) {
				found := false
				for pool, reason := range step.wantErrs {
					if strings.Contains(e.Error(), "pool "+pool+":") && strings.Contains(e.Error(), reason) {
						failed, found = append(failed, pool), true
					}
				}
				if !found {
					t.Errorf("unexpected error: %v", e)
				}
			}
			if len(failed) != len(step.wantErrs) {
				t.Errorf("errors %v, want one for each of %v", err, step.wantErrs)
			}
			for pool, want := range step.want {
				p, err := r.admin.Pool(ctx, pool)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, m := range p.Members {
					got = append(got, m.Address)
				}
				if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
					t.Errorf("members of %s in ramjetd = %q, want %q", pool, got, want)
				}
			}
		})
	}
}

// unjoin returns the errors joined in err.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestMembersAfterReload: a reload that creates a pool, or re-creates one,
// seeds it from the file; the next Members sends it anyway, so a member
// record never outlives the pool it was sent to.
func TestMembersAfterReload(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	a, b := backend(t, "A"), backend(t, "B")
	publish := func(s site) *config.Config {
		t.Helper()
		cfg, files := r.config(s)
		if _, err := r.pub.Structure(ctx, cfg, files); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := publish(site{web: []string{a}, api: []string{a}})
	if sent, err := r.pub.Members(ctx, cfg, false); err != nil || sent != 2 {
		t.Fatalf("Members = %d, %v; want 2, nil", sent, err)
	}
	// p_api goes away and comes back seeded with B, without a Members
	// call in between; then its members are A again.
	publish(site{web: []string{a}})
	publish(site{web: []string{a}, api: []string{b}})
	cfg, _ = r.config(site{web: []string{a}, api: []string{a}})
	if sent, err := r.pub.Members(ctx, cfg, false); err != nil || sent != 1 {
		t.Fatalf("Members = %d, %v; want 1 (p_api, re-created by a reload), nil", sent, err)
	}
	p, err := r.admin.Pool(ctx, "p_api")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Members) != 1 || p.Members[0].Address != a {
		t.Errorf("members of p_api = %+v, want only %s", p.Members, a)
	}
}

// TestMembersCanceled: a canceled context stops the updates.
func TestMembersCanceled(t *testing.T) {
	r := newRig(t)
	cfg, files := r.config(site{web: []string{"127.0.0.1:1"}, api: []string{"127.0.0.1:1"}})
	if _, err := r.pub.Structure(context.Background(), cfg, files); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sent, err := r.pub.Members(ctx, cfg, true)
	if sent != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Members = %d, %v; want 0, context.Canceled", sent, err)
	}
	var apiErr *admin.APIError
	if errors.As(err, &apiErr) {
		t.Errorf("Members sent a request: %v", err)
	}
}

// TestMembersAfterRestart: a ramjetd that restarted between two calls holds
// only the seeds of its file; the reload after it answers a generation
// that did not grow, and the next Members sends every pool again.
func TestMembersAfterRestart(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	a := backend(t, "A")
	for _, s := range []site{{web: []string{a}, api: []string{a}}, {web: []string{a}, api: []string{a}, balance: config.BalanceLeastConn}} {
		cfg, files := r.config(s)
		if _, err := r.pub.Structure(ctx, cfg, files); err != nil {
			t.Fatal(err)
		}
		if _, err := r.pub.Members(ctx, cfg, false); err != nil {
			t.Fatal(err)
		}
	}
	r.stop()
	r.start()
	cfg, files := r.config(site{web: []string{a}, api: []string{a}})
	if reloaded, err := r.pub.Structure(ctx, cfg, files); err != nil || !reloaded {
		t.Fatalf("Structure = %v, %v; want true, nil", reloaded, err)
	}
	if sent, err := r.pub.Members(ctx, cfg, false); err != nil || sent != 2 {
		t.Fatalf("Members after a restart = %d, %v; want 2, nil", sent, err)
	}
}

// TestRestarted: a ramjetd that restarted from the file (generation back to
// 1) is noticed once, and the next Members then sends every pool, since
// the file's seeds may be older than the members last sent.
func TestRestarted(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	a, b := backend(t, "A"), backend(t, "B")
	cfg, files := r.config(site{web: []string{a}, api: []string{a}})
	if _, err := r.pub.Structure(ctx, cfg, files); err != nil {
		t.Fatal(err)
	}
	if _, err := r.pub.Members(ctx, cfg, false); err != nil {
		t.Fatal(err)
	}
	cfg, _ = r.config(site{web: []string{b}, api: []string{a}})
	if sent, err := r.pub.Members(ctx, cfg, false); err != nil || sent != 1 {
		t.Fatalf("Members = %d, %v; want 1 (web changed)", sent, err)
	}
	if restarted, err := r.pub.Restarted(ctx); err != nil || restarted {
		t.Fatalf("Restarted before any restart = %t, %v; want false", restarted, err)
	}
	r.stop()
	r.start()
	if restarted, err := r.pub.Restarted(ctx); err != nil || !restarted {
		t.Fatalf("Restarted after a restart = %t, %v; want true", restarted, err)
	}
	if restarted, _ := r.pub.Restarted(ctx); restarted {
		t.Error("a restart was reported twice")
	}
	if sent, err := r.pub.Members(ctx, cfg, false); err != nil || sent != 2 {
		t.Errorf("Members after the restart = %d, %v; want 2 (every pool, the seeds are stale)", sent, err)
	}
}
