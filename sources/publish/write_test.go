package publish

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/daemon"
)

// TestBootstrap: the bootstrap file is what ramjetd starts with, and it
// answers 404 to everything.
func TestBootstrap(t *testing.T) {
	root, err := os.MkdirTemp("", "rj")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	dir := filepath.Join(root, "out")
	base := &config.Server{
		Listeners: map[string]*config.Listener{"http": {Address: "127.0.0.1:0"}, "https": {Address: "127.0.0.1:0", TLS: &config.ListenerTLS{}}},
		Health:    config.Health{Address: "127.0.0.1:0"},
		Admin:     config.Admin{Socket: filepath.Join(root, "a.sock")},
	}
	if err := Bootstrap(base, dir, DefaultConfigName); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	files := dirFiles(t, root)
	if files["out"] != os.ModeDir|0o700 {
		t.Errorf("mode of the created folder = %v, want drwx------", files["out"])
	}
	if mode := dirFiles(t, dir)[DefaultConfigName]; mode != 0o600 {
		t.Errorf("mode of %s = %v, want -rw-------", DefaultConfigName, mode)
	}
	path := filepath.Join(dir, DefaultConfigName)
	if err := daemon.Check(path); err != nil {
		t.Errorf("ramjetd validate: %v", err)
	}
	d, err := daemon.New(daemon.Options{ConfigPath: path, DrainDelay: time.Millisecond, ShutdownTimeout: time.Second, Log: testLogger(t)})
	if err != nil {
		t.Fatalf("ramjetd does not start from the bootstrap: %v", err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Shutdown)
	status, err := admin.NewClient(base.Admin.Socket).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"www.example.com", "anything"} {
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(&http.Request{
			Method: http.MethodGet, Host: host,
			URL: mustURL(t, "http://"+status.Listeners["http"]+"/"),
		})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET / (Host %s) = %d, want 404", host, resp.StatusCode)
		}
	}
}

// TestBootstrapRefused: a base that does not validate, or a bad file name,
// writes nothing.
func TestBootstrapRefused(t *testing.T) {
	valid := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}}
	tests := []struct {
		name       string
		base       *config.Server
		configName string
		want       string
	}{
		{"no base", nil, DefaultConfigName, "no server section"},
		{"no listener", &config.Server{}, DefaultConfigName, "server.listeners: at least one listener is required"},
		{"bad address", &config.Server{Listeners: map[string]*config.Listener{"http": {Address: "nowhere"}}}, DefaultConfigName, "server.listeners.http.address"},
		{"name with a folder", valid, "etc/ramjet.yaml", "plain file name"},
		{"parent folder", valid, "..", "plain file name"},
		{"empty name", valid, "", "plain file name"},
		{"generated name", valid, core.FileName(nil, ".crt"), "generated file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			err := Bootstrap(tc.base, dir, tc.configName)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Bootstrap = %v, want an error containing %q", err, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the folder was created (%v); want nothing written", err)
			}
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestRemoveUnreferenced: only regular files named like generated ones and
// not kept are removed.
func TestRemoveUnreferenced(t *testing.T) {
	dir := t.TempDir()
	kept := core.FileName([]byte("kept"), ".crt")
	old := core.FileName([]byte("old"), ".key")
	oldCA := core.FileName([]byte("ca"), ".ca.pem")
	for name, content := range map[string]string{
		kept:                                 "kept",
		old:                                  "old",
		oldCA:                                "ca",
		DefaultConfigName:                    "server: {}",
		"notes.txt":                          "mine",
		strings.ToUpper(old[:64]) + ".key":   "not ours: upper case",
		old[:64]:                             "not ours: no extension",
		"x" + old:                            "not ours: prefix",
		tempPrefix + "123":                   "a temporary file",
		core.FileName([]byte("ht"), ".Pass"): "not ours: upper-case extension",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	subdir := core.FileName([]byte("dir"), ".crt")
	if err := os.Mkdir(filepath.Join(dir, subdir), 0o700); err != nil {
		t.Fatal(err)
	}
	link := core.FileName([]byte("link"), ".crt")
	if err := os.Symlink(filepath.Join(dir, "notes.txt"), filepath.Join(dir, link)); err != nil {
		t.Fatal(err)
	}
	removed, err := removeUnreferenced(dir, map[string][]byte{kept: []byte("kept")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{oldCA, old}; !slices.Equal(slices.Sorted(slices.Values(removed)), slices.Sorted(slices.Values(want))) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	left := dirFiles(t, dir)
	for _, name := range []string{kept, DefaultConfigName, "notes.txt", subdir, link, tempPrefix + "123"} {
		if _, ok := left[name]; !ok {
			t.Errorf("%s was removed", name)
		}
	}
	if len(left) != 10 {
		t.Errorf("left %d entries, want 10", len(left))
	}
}

// TestNew: New creates the folder, removes temporary files left behind and
// keeps the configuration it finds as the one to write back.
func TestNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	c := admin.NewClient(filepath.Join(dir, "nobody.sock"))
	p, err := New(Options{Dir: dir, Admin: c})
	if err != nil {
		t.Fatal(err)
	}
	if p.acceptedData != nil {
		t.Errorf("accepted configuration of an empty folder = %q, want none", p.acceptedData)
	}
	if p.configName != DefaultConfigName {
		t.Errorf("configuration name = %q, want %q", p.configName, DefaultConfigName)
	}
	for name, content := range map[string]string{tempPrefix + "42": "partial", "other.yaml": "server: {}", "mine.txt": "x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err = New(Options{Dir: dir, ConfigName: "other.yaml", Admin: c})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.acceptedData) != "server: {}" {
		t.Errorf("accepted configuration = %q, want the file found", p.acceptedData)
	}
	if left := dirFiles(t, dir); len(left) != 2 || left["mine.txt"] == 0 || left["other.yaml"] == 0 {
		t.Errorf("folder after New = %v, want mine.txt and other.yaml", left)
	}
	for _, opts := range []Options{{Admin: c}, {Dir: dir}, {Dir: dir, Admin: c, ConfigName: "../ramjet.yaml"}} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", opts)
		}
	}
}

// TestWriteFile: an identical file is left alone (its mode narrowed), a
// different one replaced.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	content := []byte("content")
	name := core.FileName(content, ".crt")
	path := filepath.Join(dir, name)
	tests := []struct {
		name      string
		existing  string
		mode      os.FileMode
		wantWrote bool
	}{
		{"missing", "", 0, true},
		{"identical", "content", 0o600, false},
		{"identical, wider mode", "content", 0o644, false},
		{"different", "tampered", 0o600, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(path)
			if tc.mode != 0 {
				if err := os.WriteFile(path, []byte(tc.existing), tc.mode); err != nil {
					t.Fatal(err)
				}
				os.Chmod(path, tc.mode)
			}
			wrote, err := writeFile(dir, name, content)
			if err != nil || wrote != tc.wantWrote {
				t.Fatalf("writeFile = %v, %v; want %v, nil", wrote, err, tc.wantWrote)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "content" {
				t.Errorf("file = %q, %v; want %q", got, err, "content")
			}
			if left := dirFiles(t, dir); len(left) != 1 || left[name] != 0o600 {
				t.Errorf("folder = %v, want only %s with mode 0600", left, name)
			}
		})
	}
}
