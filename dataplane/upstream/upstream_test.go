package upstream

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func members(addrs ...string) []config.Member {
	m := make([]config.Member, len(addrs))
	for i, a := range addrs {
		m[i] = config.Member{Address: a}
	}
	return m
}

func addresses(p *Pool) []string {
	set := p.Members()
	out := make([]string, set.Len())
	for i := range out {
		out[i] = set.Member(i).Address
	}
	return out
}

func mustBuild(t *testing.T, s *State, name string, cfg *config.Pool) *Pool {
	t.Helper()
	p, err := s.Build(name, cfg)
	if err != nil {
		t.Fatalf("Build(%s): %v", name, err)
	}
	return p
}

func intp(n int) *int { return &n }

func cursorOf(t *testing.T, a balancer.Algorithm) *atomic.Uint64 {
	t.Helper()
	switch a := a.(type) {
	case balancer.RoundRobin:
		return a.Cursor
	case balancer.LeastConn:
		return a.Cursor
	}
	t.Fatalf("algorithm %T has no cursor", a)
	return nil
}

func TestBuildDefaults(t *testing.T) {
	tests := []struct {
		name        string
		cfg         config.Pool
		wantScheme  config.Scheme
		wantSource  config.MembersFrom
		wantBalance config.Balance
		wantRetries int
		wantAlgo    string
		wantHash    config.Hash
	}{
		{name: "empty", cfg: config.Pool{},
			wantScheme: config.SchemeHTTP, wantSource: config.MembersStatic, wantBalance: config.BalanceRoundRobin,
			wantRetries: 2, wantAlgo: "balancer.RoundRobin"},
		{name: "explicit", cfg: config.Pool{Scheme: config.SchemeH2C, MembersFrom: config.MembersAPI, Balance: config.BalanceLeastConn, Retries: intp(0)},
			wantScheme: config.SchemeH2C, wantSource: config.MembersAPI, wantBalance: config.BalanceLeastConn,
			wantRetries: 0, wantAlgo: "balancer.LeastConn"},
		{name: "hash by header", cfg: config.Pool{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByHeader, Header: "X-User"}, Retries: intp(5)},
			wantScheme: config.SchemeHTTP, wantSource: config.MembersStatic, wantBalance: config.BalanceHash,
			wantRetries: 5, wantAlgo: "balancer.Hash", wantHash: config.Hash{By: config.HashByHeader, Header: "X-User"}},
		{name: "hash by cookie defaults", cfg: config.Pool{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByCookie}},
			wantScheme: config.SchemeHTTP, wantSource: config.MembersStatic, wantBalance: config.BalanceHash,
			wantRetries: 2, wantAlgo: "balancer.Hash",
			wantHash: config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "INGRESSCOOKIE", Path: "/"}}},
		{name: "hash by cookie given", cfg: config.Pool{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByCookie,
			Cookie: &config.AffinityCookie{Name: "sid", Path: "/app", Domain: "example.com", MaxAge: config.Duration(time.Hour), Secure: true, SameSite: "Lax"}}},
			wantScheme: config.SchemeHTTP, wantSource: config.MembersStatic, wantBalance: config.BalanceHash,
			wantRetries: 2, wantAlgo: "balancer.Hash",
			wantHash: config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "sid", Path: "/app", Domain: "example.com",
				MaxAge: config.Duration(time.Hour), Secure: true, SameSite: "Lax"}}},
		{name: "hash by cookie name only", cfg: config.Pool{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "sid"}}},
			wantScheme: config.SchemeHTTP, wantSource: config.MembersStatic, wantBalance: config.BalanceHash,
			wantRetries: 2, wantAlgo: "balancer.Hash",
			wantHash: config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "sid", Path: "/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			var before *config.AffinityCookie
			if cfg.Hash != nil && cfg.Hash.Cookie != nil {
				c := *cfg.Hash.Cookie
				before = &c
			}
			p := mustBuild(t, NewState(), "web", &cfg)
			if p.Name != "web" || p.Scheme != tt.wantScheme || p.Source != tt.wantSource || p.Balance != tt.wantBalance || p.Retries != tt.wantRetries {
				t.Errorf("pool = {%s %s %s %s %d}, want {web %s %s %s %d}", p.Name, p.Scheme, p.Source, p.Balance, p.Retries,
					tt.wantScheme, tt.wantSource, tt.wantBalance, tt.wantRetries)
			}
			if got := typeName(p.Algorithm); got != tt.wantAlgo {
				t.Errorf("algorithm = %s, want %s", got, tt.wantAlgo)
			}
			if tt.wantAlgo != "balancer.Hash" && cursorOf(t, p.Algorithm) == nil {
				t.Errorf("%s has a nil cursor", tt.wantAlgo)
			}
			if !hashEqual(p.Hash, tt.wantHash) {
				t.Errorf("Hash = %s, want %s", hashString(p.Hash), hashString(tt.wantHash))
			}
			if p.Stats == nil || p.Transport == nil || p.Members() == nil {
				t.Errorf("Stats %v, Transport %v, Members %v: want all set", p.Stats, p.Transport, p.Members())
			}
			if before != nil && *cfg.Hash.Cookie != *before {
				t.Errorf("Build changed the configuration's cookie: %+v, was %+v", *cfg.Hash.Cookie, *before)
			}
		})
	}
}

func typeName(a balancer.Algorithm) string {
	switch a.(type) {
	case balancer.RoundRobin:
		return "balancer.RoundRobin"
	case balancer.LeastConn:
		return "balancer.LeastConn"
	case balancer.Hash:
		return "balancer.Hash"
	}
	return "other"
}

func hashEqual(a, b config.Hash) bool {
	if a.By != b.By || a.Header != b.Header || (a.Cookie == nil) != (b.Cookie == nil) {
		return false
	}
	return a.Cookie == nil || *a.Cookie == *b.Cookie
}

func hashString(h config.Hash) string {
	s := "{By:" + string(h.By) + " Header:" + h.Header
	if h.Cookie != nil {
		c := h.Cookie
		s += " Cookie:{" + c.Name + " " + c.Path + " " + c.Domain + " " + c.MaxAge.String() + " " + c.SameSite + "}"
	}
	return s + "}"
}

func TestBuildMembers(t *testing.T) {
	p := mustBuild(t, NewState(), "web", &config.Pool{Members: []config.Member{
		{Address: "127.0.0.1:1", Weight: 0}, {Address: "127.0.0.1:2", Weight: 7},
	}})
	set := p.Members()
	if set.Len() != 2 {
		t.Fatalf("members = %d, want 2", set.Len())
	}
	for i, want := range []struct {
		addr   string
		weight uint32
	}{{"127.0.0.1:1", 1}, {"127.0.0.1:2", 7}} {
		m := set.Member(i)
		if m.Address != want.addr || m.Weight != want.weight || m.Stats == nil {
			t.Errorf("member %d = {%s %d %v}, want {%s %d non-nil stats}", i, m.Address, m.Weight, m.Stats, want.addr, want.weight)
		}
	}
}

func TestSharedByIdentity(t *testing.T) {
	s := NewState()
	a := mustBuild(t, s, "a", &config.Pool{Members: members("127.0.0.1:1", "127.0.0.1:2")})
	b := mustBuild(t, s, "b", &config.Pool{Members: members("127.0.0.1:2", "127.0.0.1:3")})
	c := mustBuild(t, s, "c", &config.Pool{Scheme: config.SchemeH2C, Members: members("127.0.0.1:1")})
	s.Commit(map[string]*Pool{"a": a, "b": b, "c": c}, nil)

	t.Run("counters by address across pools", func(t *testing.T) {
		if a.Members().Member(1).Stats != b.Members().Member(0).Stats {
			t.Errorf("127.0.0.1:2 has different Stats in pools a and b, want one shared")
		}
		if a.Members().Member(0).Stats != c.Members().Member(0).Stats {
			t.Errorf("127.0.0.1:1 has different Stats in pools a and c, want one shared")
		}
		if a.Members().Member(0).Stats == a.Members().Member(1).Stats {
			t.Errorf("two addresses share Stats, want one each")
		}
	})
	t.Run("transport by settings", func(t *testing.T) {
		if a.Transport != b.Transport {
			t.Errorf("pools with equal settings have different transports, want one shared")
		}
		if a.Transport == c.Transport {
			t.Errorf("pools of schemes http and h2c share a transport, want one each")
		}
	})
	t.Run("cursor and pool stats by name", func(t *testing.T) {
		if cursorOf(t, a.Algorithm) == cursorOf(t, b.Algorithm) {
			t.Errorf("pools a and b share a cursor, want one each")
		}
		if a.Stats == b.Stats {
			t.Errorf("pools a and b share PoolStats, want one each")
		}
	})

	// The next generation keeps all of it for what it still has.
	a2 := mustBuild(t, s, "a", &config.Pool{Balance: config.BalanceLeastConn, Members: members("127.0.0.1:2", "127.0.0.1:4")})
	t.Run("next generation", func(t *testing.T) {
		if a2.Transport != a.Transport {
			t.Errorf("rebuilt pool a has a new transport, want the same pointer")
		}
		if cursorOf(t, a2.Algorithm) != cursorOf(t, a.Algorithm) {
			t.Errorf("rebuilt pool a has a new cursor, want the one of its name (even with another algorithm)")
		}
		if a2.Stats != a.Stats {
			t.Errorf("rebuilt pool a has new PoolStats, want the same")
		}
		if a2.Members().Member(0).Stats != a.Members().Member(1).Stats {
			t.Errorf("127.0.0.1:2 has new Stats in the next generation, want the same")
		}
	})
}

func TestRoundRobinContinuesAcrossBuilds(t *testing.T) {
	s := NewState()
	cfg := &config.Pool{Members: members("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3")}
	p1 := mustBuild(t, s, "web", cfg)
	s.Commit(map[string]*Pool{"web": p1}, nil)
	p2 := mustBuild(t, s, "web", cfg)
	var got []int
	for i := range 6 {
		p := p1
		if i%2 == 1 {
			p = p2
		}
		got = append(got, p.Algorithm.Pick(p.Members(), 0, nil))
	}
	want := []int{0, 1, 2, 0, 1, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("picks alternating between two generations = %v, want %v", got, want)
		}
	}
}

func TestCommitReleases(t *testing.T) {
	s := NewState()
	web := mustBuild(t, s, "web", &config.Pool{Members: members("127.0.0.1:1")})
	grpc := mustBuild(t, s, "grpc", &config.Pool{Scheme: config.SchemeH2C, Members: members("127.0.0.1:2")})
	s.Commit(map[string]*Pool{"web": web, "grpc": grpc}, nil)
	grpc.Stats.Retries.Add(4)

	s.Commit(map[string]*Pool{"web": web}, nil)
	if n := len(s.transports); n != 1 {
		t.Errorf("transports after dropping the h2c pool: %d, want 1", n)
	}
	grpc2 := mustBuild(t, s, "grpc", &config.Pool{Scheme: config.SchemeH2C, Members: members("127.0.0.1:2")})
	if grpc2.Transport == grpc.Transport {
		t.Errorf("a pool rebuilt after its transport was released got the old transport, want a new one")
	}
	if cursorOf(t, grpc2.Algorithm) == cursorOf(t, grpc.Algorithm) {
		t.Errorf("a pool rebuilt after it was gone got its old cursor, want a new one")
	}
	if grpc2.Stats == grpc.Stats || grpc2.Stats.Retries.Load() != 0 {
		t.Errorf("a pool rebuilt after it was gone kept its PoolStats (retries %d), want new ones", grpc2.Stats.Retries.Load())
	}
	if got := s.Pools(); len(got) != 1 || got["web"] != web {
		t.Errorf("Pools() = %v, want only web", got)
	}
}

func TestMembersAcrossGenerations(t *testing.T) {
	s := NewState()
	api := mustBuild(t, s, "api", &config.Pool{MembersFrom: config.MembersAPI, Members: members("127.0.0.1:1")})
	static := mustBuild(t, s, "static", &config.Pool{Members: members("127.0.0.1:2")})
	s.Commit(map[string]*Pool{"api": api, "static": static}, nil)
	if err := s.SetMembers("api", members("127.0.0.1:10", "127.0.0.1:11")); err != nil {
		t.Fatalf("SetMembers: %v", err)
	}

	tests := []struct {
		name string
		pool string
		cfg  config.Pool
		want []string
	}{
		{name: "api pool keeps its members", pool: "api",
			cfg: config.Pool{MembersFrom: config.MembersAPI, Members: members("127.0.0.1:3")}, want: []string{"127.0.0.1:10", "127.0.0.1:11"}},
		{name: "new api pool takes its seed", pool: "fresh",
			cfg: config.Pool{MembersFrom: config.MembersAPI, Members: members("127.0.0.1:4")}, want: []string{"127.0.0.1:4"}},
		{name: "static pool takes the file's members", pool: "static",
			cfg: config.Pool{Members: members("127.0.0.1:5", "127.0.0.1:6")}, want: []string{"127.0.0.1:5", "127.0.0.1:6"}},
		{name: "static pool turned api takes its seed", pool: "static",
			cfg: config.Pool{MembersFrom: config.MembersAPI, Members: members("127.0.0.1:7")}, want: []string{"127.0.0.1:7"}},
		{name: "api pool turned static takes the file's members", pool: "api",
			cfg: config.Pool{MembersFrom: config.MembersStatic, Members: members("127.0.0.1:8")}, want: []string{"127.0.0.1:8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustBuild(t, s, tt.pool, &tt.cfg)
			got := addresses(p)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("members = %v, want %v", got, tt.want)
			}
		})
	}

	// After the commit, the old and the new generation of the api pool
	// share the members: an update reaches both.
	api2 := mustBuild(t, s, "api", &config.Pool{MembersFrom: config.MembersAPI})
	s.Commit(map[string]*Pool{"api": api2}, nil)
	if err := s.SetMembers("api", members("127.0.0.1:12")); err != nil {
		t.Fatalf("SetMembers: %v", err)
	}
	for name, p := range map[string]*Pool{"old generation": api, "new generation": api2} {
		if got := addresses(p); len(got) != 1 || got[0] != "127.0.0.1:12" {
			t.Errorf("%s: members after SetMembers = %v, want [127.0.0.1:12]", name, got)
		}
	}
}

func TestSetMembers(t *testing.T) {
	s := NewState()
	api := mustBuild(t, s, "api", &config.Pool{MembersFrom: config.MembersAPI, Members: members("127.0.0.1:1")})
	static := mustBuild(t, s, "static", &config.Pool{Members: members("127.0.0.1:2")})
	// Built but not committed: SetMembers must not know it.
	mustBuild(t, s, "later", &config.Pool{MembersFrom: config.MembersAPI})
	s.Commit(map[string]*Pool{"api": api, "static": static}, nil)

	tests := []struct {
		name    string
		pool    string
		members []config.Member
		wantErr error
		want    []string // api's members afterwards
	}{
		{name: "unknown pool", pool: "nope", members: members("127.0.0.1:9"), wantErr: ErrUnknownPool, want: []string{"127.0.0.1:1"}},
		{name: "built but not committed", pool: "later", members: members("127.0.0.1:9"), wantErr: ErrUnknownPool, want: []string{"127.0.0.1:1"}},
		{name: "static pool", pool: "static", members: members("127.0.0.1:9"), wantErr: ErrStaticPool, want: []string{"127.0.0.1:1"}},
		{name: "replace", pool: "api", members: members("127.0.0.1:2", "127.0.0.1:3"), want: []string{"127.0.0.1:2", "127.0.0.1:3"}},
		{name: "empty", pool: "api", members: nil, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.SetMembers(tt.pool, tt.members)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("SetMembers(%s) error = %v, want %v", tt.pool, err, tt.wantErr)
			}
			if got := addresses(api); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("api members = %v, want %v", got, tt.want)
			}
			if got := addresses(static); len(got) != 1 || got[0] != "127.0.0.1:2" {
				t.Errorf("static members = %v, want [127.0.0.1:2]", got)
			}
		})
	}

	// Members set through the API share counters with the same address in
	// other pools.
	if err := s.SetMembers("api", members("127.0.0.1:2")); err != nil {
		t.Fatal(err)
	}
	if api.Members().Member(0).Stats != static.Members().Member(0).Stats {
		t.Errorf("127.0.0.1:2 set through the API has its own Stats, want the static pool's")
	}
}

func TestPruneStats(t *testing.T) {
	s := NewState()
	p := mustBuild(t, s, "api", &config.Pool{MembersFrom: config.MembersAPI, Members: members("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3")})
	s.Commit(map[string]*Pool{"api": p}, nil)
	old := map[string]*balancer.Stats{}
	for i := range p.Members().Len() {
		m := p.Members().Member(i)
		old[m.Address] = m.Stats
	}
	old["127.0.0.1:1"].InFlight.Add(1) // busy
	old["127.0.0.1:2"].Requests.Add(5) // idle, leaving
	old["127.0.0.1:3"].Requests.Add(6) // staying

	// A member update is a prune point as well as a commit.
	if err := s.SetMembers("api", members("127.0.0.1:3")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		addr     string
		wantKept bool
	}{
		{"127.0.0.1:1", true},  // requests in flight
		{"127.0.0.1:2", false}, // gone and idle
		{"127.0.0.1:3", true},  // still used
	} {
		t.Run(tt.addr, func(t *testing.T) {
			q := mustBuild(t, s, "probe", &config.Pool{Members: members(tt.addr)})
			kept := q.Members().Member(0).Stats == old[tt.addr]
			if kept != tt.wantKept {
				t.Errorf("counters of %s kept = %v, want %v", tt.addr, kept, tt.wantKept)
			}
		})
	}

	// Once the busy member's request ends, the next prune drops it.
	old["127.0.0.1:1"].InFlight.Add(-1)
	s.Commit(map[string]*Pool{"api": p}, nil)
	q := mustBuild(t, s, "probe", &config.Pool{Members: members("127.0.0.1:1")})
	if q.Members().Member(0).Stats == old["127.0.0.1:1"] {
		t.Errorf("counters of 127.0.0.1:1 kept after its request ended and a commit without it, want dropped")
	}
}

func TestBuildCAFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		caFile string
		wantIn string
	}{
		{name: "missing", caFile: filepath.Join(dir, "missing.pem"), wantIn: "no such file"},
		{name: "not PEM", caFile: bad, wantIn: "CA bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState()
			p, err := s.Build("web", &config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: tt.caFile}})
			if err == nil {
				t.Fatalf("Build succeeded (pool %v), want an error", p)
			}
			if !strings.HasPrefix(err.Error(), "tls.ca_file: ") || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error = %q, want it to start with %q and contain %q", err, "tls.ca_file: ", tt.wantIn)
			}
			if len(s.transports) != 0 {
				t.Errorf("a failed Build left %d transports, want 0", len(s.transports))
			}
		})
	}
}

// TestConcurrentMembers reads members and picks while the API replaces
// them; run with -race.
func TestConcurrentMembers(t *testing.T) {
	s := NewState()
	for _, balance := range []config.Balance{config.BalanceRoundRobin, config.BalanceLeastConn, config.BalanceHash} {
		t.Run(string(balance), func(t *testing.T) {
			cfg := &config.Pool{MembersFrom: config.MembersAPI, Balance: balance, Members: members("127.0.0.1:1")}
			if balance == config.BalanceHash {
				cfg.Hash = &config.Hash{By: config.HashByClientIP}
			}
			p := mustBuild(t, s, "api", cfg)
			s.Commit(map[string]*Pool{"api": p}, nil)
			lists := [][]config.Member{
				members("127.0.0.1:1"),
				members("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"),
				nil,
				members("127.0.0.1:4", "127.0.0.1:2"),
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			var bad atomic.Value
			for g := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := uint64(0); !stop.Load(); i++ {
						set := p.Members()
						n := set.Len()
						j := p.Algorithm.Pick(set, i*uint64(g+1), nil)
						if (n == 0) != (j < 0) || j >= n {
							bad.CompareAndSwap(nil, "Pick over a set of "+string(rune('0'+n))+" members returned an index out of range")
							return
						}
						if j >= 0 {
							m := set.Member(j)
							m.Stats.InFlight.Add(1)
							m.Stats.Requests.Add(1)
							m.Stats.InFlight.Add(-1)
						}
					}
				}()
			}
			for i := range 2000 {
				if err := s.SetMembers("api", lists[i%len(lists)]); err != nil {
					t.Errorf("SetMembers: %v", err)
					break
				}
			}
			stop.Store(true)
			wg.Wait()
			if msg := bad.Load(); msg != nil {
				t.Error(msg)
			}
		})
	}
}

func TestVariant(t *testing.T) {
	s := NewState()
	p := mustBuild(t, s, "p", &config.Pool{Members: members("127.0.0.1:1")})
	if v := s.Variant(p, 0, 0); v != p.Transport {
		t.Error("a variant without timeouts is not the pool's transport")
	}
	if v := s.Variant(p, config.DefaultConnectTimeout, 0); v != p.Transport {
		t.Error("a variant with the pool's own timeouts is not the pool's transport")
	}
	v := s.Variant(p, 0, 3*time.Second)
	if v == p.Transport || v.HTTP.ResponseHeaderTimeout != 3*time.Second || v.fast.ResponseHeaderTimeout != 3*time.Second {
		t.Fatalf("variant: same %t, response timeout %v; want a new transport with 3s", v == p.Transport, v.HTTP.ResponseHeaderTimeout)
	}
	if again := s.Variant(p, 0, 3*time.Second); again != v {
		t.Error("routes with equal timeouts do not share the variant")
	}
	s.Commit(map[string]*Pool{"p": p}, []*Transport{v})
	if again := s.Variant(p, 0, 3*time.Second); again != v {
		t.Error("a committed variant was dropped")
	}
	s.Commit(map[string]*Pool{"p": p}, nil)
	if again := s.Variant(p, 0, 3*time.Second); again == v {
		t.Error("an unused variant survived Commit")
	}
}
