package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// affinityConfig has one application whose pool p hashes a session cookie
// in .Mode, with .ChangeOnFailure, and takes its members from the admin API.
const affinityConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: true}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
    pools:
      p:
        members_from: api
        members: [{{range .Seed}}"{{.}}", {{end}}]
        balance: hash
        hash: {by: cookie, cookie: {mode: {{.Mode}}, change_on_failure: {{.ChangeOnFailure}}}}
`

// flaky is a test member that answers its name, or 502 while failing.
type flaky struct {
	*backend
	name    string
	failing atomic.Bool
}

func startFlaky(t *testing.T, name string) *flaky {
	f := &flaky{name: name}
	f.backend = startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if f.failing.Load() {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		io.WriteString(w, name)
	})
	return f
}

// sticky sends a request with the cookie (none when empty) and returns the
// member that answered and the new cookie's value, if one was set.
func sticky(t *testing.T, c *http.Client, url, cookie string, header ...string) (member, setCookie string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/", nil)
	req.Host = "app.test"
	if cookie != "" {
		req.Header.Set("Cookie", "INGRESSCOOKIE="+cookie)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d %q, want 200", resp.StatusCode, body)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "INGRESSCOOKIE" {
			setCookie = ck.Value
		}
	}
	return string(body), setCookie
}

func addrs(members []*flaky) []config.Member {
	var out []config.Member
	for _, m := range members {
		out = append(out, config.Member{Address: m.addr})
	}
	return out
}

// TestAffinityMembersChange gives 200 clients their cookie on 3 members,
// then adds members through the admin API (no reload): in persistent mode
// no client moves, in balanced mode only the clients of the ring arcs the
// new members take move, to a new member.
func TestAffinityMembersChange(t *testing.T) {
	for _, tc := range []struct {
		mode     config.AffinityMode
		added    int
		minMoved float64 // share of the clients
		maxMoved float64
	}{
		{config.AffinityPersistent, 6, 0, 0},
		{config.AffinityBalanced, 1, 0.10, 0.45}, // 1/4 expected
		{config.AffinityBalanced, 6, 0.45, 0.85}, // 6/9 expected
	} {
		t.Run(fmt.Sprintf("%s/+%d", tc.mode, tc.added), func(t *testing.T) {
			var members []*flaky
			for i := range 3 + tc.added {
				members = append(members, startFlaky(t, fmt.Sprint("m", i)))
			}
			td := startDaemon(t, affinityConfig, map[string]any{"Seed": []string{members[0].addr}, "Mode": tc.mode, "ChangeOnFailure": false})
			ctx := context.Background()
			if err := td.admin.SetMembers(ctx, "p", addrs(members[:3])); err != nil {
				t.Fatal(err)
			}
			gen := td.current.Load().number
			c := client()
			const clients = 200
			cookies, first := make([]string, clients), make([]string, clients)
			for i := range clients {
				first[i], cookies[i] = sticky(t, c, td.url("http"), "")
				if cookies[i] == "" {
					t.Fatalf("client %d got no cookie", i)
				}
			}
			// Every member had clients, and a cookie keeps its client.
			seen := map[string]bool{}
			for i := range clients {
				seen[first[i]] = true
				if got, set := sticky(t, c, td.url("http"), cookies[i]); got != first[i] || set != "" {
					t.Fatalf("client %d: went to %s (new cookie %q), want %s without a new cookie", i, got, set, first[i])
				}
			}
			if len(seen) != 3 {
				t.Fatalf("new clients reached %d members, want 3", len(seen))
			}

			if err := td.admin.SetMembers(ctx, "p", addrs(members)); err != nil {
				t.Fatal(err)
			}
			if g := td.current.Load().number; g != gen {
				t.Fatalf("generation %d after a member update, want %d (no reload)", g, gen)
			}
			moved := 0
			for i := range clients {
				got, set := sticky(t, c, td.url("http"), cookies[i])
				if got == first[i] {
					continue
				}
				moved++
				if strings.Compare(got, "m3") < 0 || len(got) != 2 {
					t.Errorf("client %d moved from %s to %s, an old member, want only moves to new members", i, first[i], got)
				}
				if set != "" {
					t.Errorf("client %d got a new cookie in balanced mode", i)
				}
			}
			share := float64(moved) / clients
			t.Logf("%s, 3 -> %d members: %d of %d clients moved", tc.mode, 3+tc.added, moved, clients)
			if share < tc.minMoved || share > tc.maxMoved {
				t.Errorf("%d of %d clients moved (%.2f), want %.2f..%.2f", moved, clients, share, tc.minMoved, tc.maxMoved)
			}
		})
	}
}

// TestAffinityPersistentMemberGone removes a member: its clients get
// another member and a cookie naming it, the others stay where they are.
func TestAffinityPersistentMemberGone(t *testing.T) {
	var members []*flaky
	for i := range 3 {
		members = append(members, startFlaky(t, fmt.Sprint("m", i)))
	}
	td := startDaemon(t, affinityConfig, map[string]any{"Seed": []string{members[0].addr, members[1].addr, members[2].addr}, "Mode": "persistent", "ChangeOnFailure": false})
	c := client()
	cookies, first := make([]string, 60), make([]string, 60)
	for i := range cookies {
		first[i], cookies[i] = sticky(t, c, td.url("http"), "")
	}
	if err := td.admin.SetMembers(context.Background(), "p", addrs(members[:2])); err != nil {
		t.Fatal(err)
	}
	gone := 0
	for i := range cookies {
		got, set := sticky(t, c, td.url("http"), cookies[i])
		switch {
		case first[i] != "m2" && (got != first[i] || set != ""):
			t.Errorf("client %d of %s went to %s (new cookie %q), want it to stay", i, first[i], got, set)
		case first[i] == "m2":
			gone++
			if got == "m2" || set == "" {
				t.Fatalf("client %d of the removed member: went to %s with new cookie %q, want another member and a cookie", i, got, set)
			}
			if again, set2 := sticky(t, c, td.url("http"), set); again != got || set2 != "" {
				t.Errorf("client %d with its new cookie went to %s (cookie %q), want %s", i, again, set2, got)
			}
		}
	}
	if gone == 0 {
		t.Fatal("no client was on the removed member")
	}
}

// TestAffinityChangeOnFailure makes a client's member fail (502): the
// request is retried on another member; with change_on_failure the answer
// moves the client there, without it the client goes back to its member
// once it recovers.
func TestAffinityChangeOnFailure(t *testing.T) {
	for _, mode := range []config.AffinityMode{config.AffinityBalanced, config.AffinityPersistent} {
		for _, change := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/change=%v", mode, change), func(t *testing.T) {
				var members []*flaky
				var seed []string
				for i := range 3 {
					members = append(members, startFlaky(t, fmt.Sprint("m", i)))
					seed = append(seed, members[i].addr)
				}
				td := startDaemon(t, affinityConfig, map[string]any{"Seed": seed, "Mode": mode, "ChangeOnFailure": change})
				c := client()
				home, cookie := sticky(t, c, td.url("http"), "")
				var failing *flaky
				for _, m := range members {
					if m.name == home {
						failing = m
					}
				}
				failing.failing.Store(true)
				got, set := sticky(t, c, td.url("http"), cookie)
				if got == home {
					t.Fatalf("a failing member answered")
				}
				if change != (set != "") {
					t.Fatalf("after a failed try the answer from %s set cookie %q; want a new cookie: %v", got, set, change)
				}
				failing.failing.Store(false)
				next := cookie
				if change {
					next = set
				}
				for range 10 {
					again, set2 := sticky(t, c, td.url("http"), next)
					want := home
					if change {
						want = got
					}
					if again != want || set2 != "" {
						t.Fatalf("next request went to %s (cookie %q), want %s", again, set2, want)
					}
				}
			})
		}
	}
}

// canaryConfig has a main pool and a canary pool that share the affinity
// cookie: X-Canary: yes sends a request to the canary, 1% of the others go
// there by weight; with .Sticky the pool that set a client's cookie keeps
// it.
const canaryConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}, headers: [{name: X-Canary, exact: "yes"}]}
            action: {pools: [{pool: canary, weight: 1}, {pool: main, weight: 0}], sticky: {{.Sticky}}}
          - match: {path: {prefix: /}}
            action: {pools: [{pool: main, weight: 99}, {pool: canary, weight: 1}], sticky: {{.Sticky}}}
    pools:
      main:
        members: ["{{.Main0}}", "{{.Main1}}"]
        balance: hash
        hash: {by: cookie}
      canary:
        members: ["{{.Canary}}"]
        balance: hash
        hash: {by: cookie}
`

func TestAffinityCanarySticky(t *testing.T) {
	main0, main1, canary := startBackend(t, echo("main0")), startBackend(t, echo("main1")), startBackend(t, echo("canary"))
	for _, stick := range []bool{true, false} {
		t.Run(fmt.Sprintf("sticky=%v", stick), func(t *testing.T) {
			td := startDaemon(t, canaryConfig, map[string]any{"Main0": main0.addr, "Main1": main1.addr, "Canary": canary.addr, "Sticky": stick})
			c := client()
			got, cookie := sticky(t, c, td.url("http"), "", "X-Canary", "yes")
			if !strings.HasPrefix(got, "canary") || cookie == "" {
				t.Fatalf("forced to the canary: answered %q with cookie %q", got, cookie)
			}
			onCanary := 0
			for range 50 {
				if got, _ := sticky(t, c, td.url("http"), cookie); strings.HasPrefix(got, "canary") {
					onCanary++
				}
			}
			if stick && onCanary != 50 {
				t.Errorf("with the canary's cookie %d of 50 requests went to the canary, want all", onCanary)
			}
			if !stick && onCanary > 10 {
				t.Errorf("without sticky %d of 50 requests went to the 1%% canary", onCanary)
			}

			// A client the main pool served: with sticky it stays there,
			// even when it asks for the canary (ingress-nginx's affinity
			// is looked at before the canary's header).
			var mainCookie, mainMember string
			for range 20 {
				if m, ck := sticky(t, c, td.url("http"), ""); !strings.HasPrefix(m, "canary") {
					mainMember, mainCookie = m, ck
					break
				}
			}
			got, _ = sticky(t, c, td.url("http"), mainCookie, "X-Canary", "yes")
			if stick && got != mainMember {
				t.Errorf("a client of %s asking for the canary went to %s, want %s", mainMember, got, mainMember)
			}
			if !stick && !strings.HasPrefix(got, "canary") {
				t.Errorf("without sticky the canary header went to %s", got)
			}
		})
	}
}

// TestHashSubset sends the requests of one key to the members of one
// subset: with subsets of 2 of 4 members, a user id reaches exactly two.
func TestHashSubset(t *testing.T) {
	var members []string
	for i := range 4 {
		members = append(members, startBackend(t, echo(fmt.Sprint("m", i))).addr)
	}
	td := startDaemon(t, poolConfig+"        hash: {by: header, header: X-User, subset_size: 2}\n", map[string]any{"Members": members, "Balance": "hash"})
	c := client()
	all := map[string]bool{}
	for user := range 20 {
		seen := map[string]bool{}
		for range 40 {
			req, _ := http.NewRequest(http.MethodGet, td.url("http")+"/", nil)
			req.Host = "app.test"
			req.Header.Set("X-User", fmt.Sprint("user-", user))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			seen[strings.Fields(string(body))[0]] = true
		}
		if len(seen) != 2 {
			t.Errorf("user-%d reached %d members %v, want the 2 of its subset", user, len(seen), seen)
		}
		for m := range seen {
			all[m] = true
		}
	}
	if len(all) != 4 {
		t.Errorf("20 users reached %d members, want all 4", len(all))
	}
}
