package publish

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TestStructure follows one ramjetd through the life of a controller: the
// first publication, an unchanged one, a change of members only, refused
// configurations and a valid one after them.
func TestStructure(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	a, b := backend(t, "A"), backend(t, "B")
	bootstrap := r.configFile()
	if status, _ := r.get("www.test"); status != http.StatusNotFound {
		t.Fatalf("bootstrap: GET / = %d, want 404", status)
	}
	gen := r.status().Generation

	// The first publication reloads and serves.
	cert1 := newCert(t, "secure.test")
	cfg1, files1 := r.config(site{web: []string{a}, cert: cert1})
	reloaded, err := r.pub.Structure(ctx, cfg1, files1)
	if err != nil || !reloaded {
		t.Fatalf("first Structure = %v, %v; want true, nil", reloaded, err)
	}
	if got := r.status().Generation; got != gen+1 {
		t.Fatalf("generation after the first publication = %d, want %d", got, gen+1)
	}
	gen++
	r.wantServed("www.test", "A")
	accepted := r.configFile()
	if want := mustMarshal(t, cfg1); !bytes.Equal(accepted, want) {
		t.Fatalf("ramjet.yaml after the first publication:\n%s\nwant:\n%s", accepted, want)
	}
	for name, content := range files1 {
		if got, err := os.ReadFile(filepath.Join(r.dir, name)); err != nil || !bytes.Equal(got, content) {
			t.Errorf("file %s: %v, content equal %v; want written", name, err, bytes.Equal(got, content))
		}
	}

	// The same configuration again does not reload.
	cfg1, files1 = r.config(site{web: []string{a}, cert: cert1})
	if reloaded, err := r.pub.Structure(ctx, cfg1, files1); err != nil || reloaded {
		t.Fatalf("Structure of the same configuration = %v, %v; want false, nil", reloaded, err)
	}
	if got := r.status().Generation; got != gen {
		t.Fatalf("generation after the same configuration = %d, want %d", got, gen)
	}

	// A change of members only: no reload, no new file; Members sends them.
	cfgB, filesB := r.config(site{web: []string{b}, cert: cert1})
	if reloaded, err := r.pub.Structure(ctx, cfgB, filesB); err != nil || reloaded {
		t.Fatalf("Structure after a change of members = %v, %v; want false, nil", reloaded, err)
	}
	if got := r.status().Generation; got != gen {
		t.Fatalf("generation after a change of members = %d, want %d", got, gen)
	}
	if !bytes.Equal(r.configFile(), accepted) {
		t.Fatal("a change of members rewrote ramjet.yaml")
	}
	if sent, err := r.pub.Members(ctx, cfgB, false); err != nil || sent != 1 {
		t.Fatalf("Members = %d, %v; want 1, nil", sent, err)
	}
	pool, err := r.admin.Pool(ctx, "p_web")
	if err != nil {
		t.Fatal(err)
	}
	if len(pool.Members) != 1 || pool.Members[0].Address != b {
		t.Fatalf("members of p_web in ramjetd = %+v, want only %s", pool.Members, b)
	}
	r.wantServed("www.test", "B")

	// Refused configurations: ramjetd's reason comes back, the accepted
	// ramjet.yaml is written back, the old configuration keeps serving and
	// the refused one's files stay until a reload is accepted.
	broken := &testCert{cert: []byte("not a certificate\n"), key: []byte("not a key\n")}
	refusals := []struct {
		name       string
		site       site
		wantReason string
	}{
		{"certificate that does not parse", site{web: []string{b}, cert: broken}, "h_secure.tls"},
		{"route to a missing pool", site{web: []string{b}, cert: cert1, brokenRoute: true}, "p_missing"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			cfg, files := r.config(tc.site)
			// The second try shows that a refusal is tried again with the
			// same configuration.
			for try := 1; try <= 2; try++ {
				reloaded, err := r.pub.Structure(ctx, cfg, files)
				var refused *RefusedError
				if reloaded || !errors.As(err, &refused) {
					t.Fatalf("try %d: Structure = %v, %v; want false and a *RefusedError", try, reloaded, err)
				}
				if !strings.Contains(err.Error(), tc.wantReason) {
					t.Errorf("try %d: error %q does not give ramjetd's reason (%q)", try, err, tc.wantReason)
				}
				var ce *admin.ConfigError
				if !errors.As(err, &ce) || len(ce.Problems) == 0 {
					t.Errorf("try %d: error %v does not wrap ramjetd's *admin.ConfigError", try, err)
				}
				if !bytes.Equal(r.configFile(), accepted) {
					t.Fatalf("try %d: ramjet.yaml after a refusal:\n%s\nwant the accepted one:\n%s", try, r.configFile(), accepted)
				}
				if got := r.status().Generation; got != gen {
					t.Fatalf("try %d: generation after a refusal = %d, want %d", try, got, gen)
				}
				r.wantServed("www.test", "B")
			}
			for name := range files {
				if _, err := os.Stat(filepath.Join(r.dir, name)); err != nil {
					t.Errorf("file %s of the refused configuration: %v; want kept until a reload is accepted", name, err)
				}
			}
		})
	}
	for name := range files1 {
		if _, err := os.Stat(filepath.Join(r.dir, name)); err != nil {
			t.Errorf("file %s of the serving configuration after refusals: %v", name, err)
		}
	}

	// A file that is not ours stays whatever happens.
	if err := os.WriteFile(filepath.Join(r.dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A valid configuration after the refusals is accepted; the files it
	// does not name are removed, its own stay.
	cert2 := newCert(t, "secure.test")
	cfg2, files2 := r.config(site{web: []string{b}, cert: cert2, balance: config.BalanceLeastConn})
	if reloaded, err := r.pub.Structure(ctx, cfg2, files2); err != nil || !reloaded {
		t.Fatalf("Structure after refusals = %v, %v; want true, nil", reloaded, err)
	}
	if got := r.status().Generation; got != gen+1 {
		t.Fatalf("generation after a valid configuration = %d, want %d", got, gen+1)
	}
	r.wantServed("secure.test", "B")
	got := dirFiles(t, r.dir)
	want := []string{DefaultConfigName, "admin.sock", "notes.txt"}
	for name := range files2 {
		want = append(want, name)
	}
	if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, slices.Sorted(slices.Values(want))) {
		t.Errorf("folder after an accepted reload = %q, want %q", names, slices.Sorted(slices.Values(want)))
	}
	for name, mode := range got {
		if name == "admin.sock" || name == "notes.txt" {
			continue
		}
		if mode != 0o600 {
			t.Errorf("mode of %s = %v, want -rw-------", name, mode)
		}
	}
	if bytes.Equal(r.configFile(), bootstrap) {
		t.Error("ramjet.yaml is still the bootstrap")
	}
}

// TestStructureUnreachable: when ramjetd does not answer (it is
// restarting), nothing is written back: ramjet.yaml keeps the new
// configuration, which the restarted ramjetd starts from, and the next
// publication reloads it and sends every pool's members again.
func TestStructureUnreachable(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	a, b := backend(t, "A"), backend(t, "B")
	cfg1, files1 := r.config(site{web: []string{a}, api: []string{a}})
	if reloaded, err := r.pub.Structure(ctx, cfg1, files1); err != nil || !reloaded {
		t.Fatalf("Structure = %v, %v; want true, nil", reloaded, err)
	}
	if sent, err := r.pub.Members(ctx, cfg1, false); err != nil || sent != 2 {
		t.Fatalf("Members = %d, %v; want 2, nil", sent, err)
	}

	r.stop()
	cfg2, files2 := r.config(site{web: []string{a}, api: []string{a}, cert: newCert(t, "secure.test")})
	reloaded, err := r.pub.Structure(ctx, cfg2, files2)
	var refused *RefusedError
	if reloaded || err == nil || errors.As(err, &refused) {
		t.Fatalf("Structure with ramjetd down = %v, %v; want false and an error that is not a refusal", reloaded, err)
	}
	if want := mustMarshal(t, cfg2); !bytes.Equal(r.configFile(), want) {
		t.Fatalf("ramjet.yaml with ramjetd down:\n%s\nwant the new configuration (nothing written back):\n%s", r.configFile(), want)
	}
	// Members: unreachable too, one error and no more tries.
	cfgB, _ := r.config(site{web: []string{b}, api: []string{b}, cert: newCert(t, "secure.test")})
	if sent, err := r.pub.Members(ctx, cfgB, false); sent != 0 || err == nil || strings.Count(err.Error(), "pool") != 1 {
		t.Fatalf("Members with ramjetd down = %d, %v; want 0 and one error", sent, err)
	}

	// ramjetd restarts from the file left in place, with the seeds. The
	// controller goes back to the configuration accepted before: it is not
	// what ramjetd serves now, so it is published.
	r.start()
	if _, ok := r.status().Listeners["http"]; !ok {
		t.Fatal("ramjetd did not restart")
	}
	if reloaded, err := r.pub.Structure(ctx, cfg1, files1); err != nil || !reloaded {
		t.Fatalf("Structure of the configuration accepted before = %v, %v; want true, nil", reloaded, err)
	}
	if want := mustMarshal(t, cfg1); !bytes.Equal(r.configFile(), want) {
		t.Fatalf("ramjet.yaml = \n%s\nwant:\n%s", r.configFile(), want)
	}
	if reloaded, err := r.pub.Structure(ctx, cfg2, files2); err != nil || !reloaded {
		t.Fatalf("Structure after the restart = %v, %v; want true, nil", reloaded, err)
	}
	r.wantServed("secure.test", "A")
	if sent, err := r.pub.Members(ctx, cfg2, false); err != nil || sent != 2 {
		t.Fatalf("Members after the restart = %d, %v; want 2 (every pool again), nil", sent, err)
	}
}

// TestStructureNoDaemon: an admin socket nobody listens on is an error and
// the file is not written back, not even to the bootstrap.
func TestStructureNoDaemon(t *testing.T) {
	dir := t.TempDir()
	base := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: "127.0.0.1:0"}}}
	if err := Bootstrap(base, dir, DefaultConfigName); err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Dir: dir, Admin: admin.NewClient(filepath.Join(dir, "nobody.sock")), Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Server: *base, Tenants: map[string]*config.Tenant{core.TenantName: {
		Pools: map[string]*config.Pool{"p_web": {MembersFrom: config.MembersAPI, Members: []config.Member{{Address: "127.0.0.1:1"}}}},
	}}}
	for try := 1; try <= 2; try++ {
		reloaded, err := p.Structure(context.Background(), cfg, nil)
		if reloaded || err == nil || !strings.Contains(err.Error(), "nobody.sock") {
			t.Fatalf("try %d: Structure = %v, %v; want false and an error naming the socket", try, reloaded, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, DefaultConfigName))
		if err != nil {
			t.Fatal(err)
		}
		if want := mustMarshal(t, cfg); !bytes.Equal(data, want) {
			t.Fatalf("try %d: ramjet.yaml = \n%s\nwant the new configuration:\n%s", try, data, want)
		}
	}
}

// TestStructureRefusedWithoutBootstrap: when no configuration was in the
// folder at New, a refused one has nothing to be replaced with and stays.
func TestStructureRefusedWithoutBootstrap(t *testing.T) {
	r := newRig(t)
	if err := os.Remove(filepath.Join(r.dir, DefaultConfigName)); err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Dir: r.dir, Admin: r.admin, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cfg, files := r.config(site{brokenRoute: true})
	var refused *RefusedError
	if _, err := p.Structure(context.Background(), cfg, files); !errors.As(err, &refused) {
		t.Fatalf("Structure = %v, want a *RefusedError", err)
	}
	if want := mustMarshal(t, cfg); !bytes.Equal(r.configFile(), want) {
		t.Fatalf("ramjet.yaml = \n%s\nwant the refused one, left in place", r.configFile())
	}
}

// TestStructureBadFileNames: names that are not a content digest plus an
// extension are refused before anything is written.
func TestStructureBadFileNames(t *testing.T) {
	content := []byte("content")
	good := core.FileName(content, ".crt")
	tests := []struct {
		name string
		file string
	}{
		{"path separator", "x/" + good},
		{"parent folder", "../" + good},
		{"dot dot", ".."},
		{"configuration file", DefaultConfigName},
		{"no extension", good[:64]},
		{"upper case digest", strings.ToUpper(good[:64]) + ".crt"},
		{"digest of other content", core.FileName([]byte("other"), ".crt")},
		{"empty", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, err := New(Options{Dir: dir, Admin: admin.NewClient(filepath.Join(dir, "nobody.sock"))})
			if err != nil {
				t.Fatal(err)
			}
			cfg := &config.Config{Server: config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}}}
			_, err = p.Structure(context.Background(), cfg, map[string][]byte{good: content, tc.file: content})
			if err == nil || !strings.Contains(err.Error(), "generated file name") {
				t.Fatalf("Structure = %v, want an error about the generated file name", err)
			}
			if files := dirFiles(t, dir); len(files) != 0 {
				t.Errorf("folder after a refused name = %v, want empty", files)
			}
		})
	}
}

// TestStructureDigest: only the members of api pools are left out of the
// structure.
func TestStructureDigest(t *testing.T) {
	base := func() *config.Config {
		return &config.Config{
			Server: config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
			Tenants: map[string]*config.Tenant{core.TenantName: {
				Pools: map[string]*config.Pool{
					"p_api":    {MembersFrom: config.MembersAPI, Members: []config.Member{{Address: "10.0.0.1:80"}, {Address: "10.0.0.2:80"}}},
					"p_static": {Members: []config.Member{{Address: "10.0.1.1:80"}}},
				},
			}},
		}
	}
	tests := []struct {
		name   string
		change func(*config.Config)
		same   bool
	}{
		{"nothing", func(*config.Config) {}, true},
		{"api members", func(c *config.Config) {
			c.Tenants[core.TenantName].Pools["p_api"].Members = []config.Member{{Address: "10.0.0.3:80"}}
		}, true},
		{"api members emptied", func(c *config.Config) { c.Tenants[core.TenantName].Pools["p_api"].Members = nil }, true},
		{"api member weight", func(c *config.Config) { c.Tenants[core.TenantName].Pools["p_api"].Members[0].Weight = 5 }, true},
		{"static members", func(c *config.Config) {
			c.Tenants[core.TenantName].Pools["p_static"].Members = []config.Member{{Address: "10.0.1.2:80"}}
		}, false},
		{"balance", func(c *config.Config) { c.Tenants[core.TenantName].Pools["p_api"].Balance = config.BalanceLeastConn }, false},
		{"new pool", func(c *config.Config) {
			c.Tenants[core.TenantName].Pools["p_new"] = &config.Pool{MembersFrom: config.MembersAPI}
		}, false},
		{"server", func(c *config.Config) { c.Server.AccessLog = true }, false},
	}
	want, err := structureDigest(base())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.change(cfg)
			before := mustMarshal(t, cfg)
			got, err := structureDigest(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tc.same {
				t.Errorf("digest equal to the base's = %v, want %v", got == want, tc.same)
			}
			if !bytes.Equal(mustMarshal(t, cfg), before) {
				t.Error("structureDigest changed its argument")
			}
		})
	}
}
