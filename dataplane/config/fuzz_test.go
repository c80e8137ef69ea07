package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// FuzzDecode feeds arbitrary bytes to Decode. Decode must never panic and
// must return either a config or an error; when it returns a config,
// Validate must not panic, must give the same answer twice, must return
// only FieldErrors, and the config must survive a JSON round trip.
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files in testdata (%v)", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		"",
		"---\n",
		"server: {listeners: {http: {address: ':80'}}}\n",
		"server: {listeners: {http: {address: ':80'}}}\n---\nserver: {}\n",
		"tenants: {t: {pools: {p: {members: [a:1, {address: 'b:2', weight: 3}]}}}}\n",
		"tenants: {t: {applications: {a: {domains: ['*'], routes: [~, {match: {path: {regex: '(a'}}}]}}}}\n",
		"x: &a [*a]\n",
		"server: &s {listeners: {a: {address: ':1'}}}\ntenants: {t: {pools: {p: {members: [*s]}}}}\n",
		"server:\n  limits: {max_header_bytes: 64k, idle_timeout: 1m, max_request_body_bytes: 4294967296G}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Decode(data)
		if err != nil {
			if cfg != nil {
				t.Errorf("Decode: got a config and the error %v, want nil with an error", err)
			}
			if err.Error() == "" {
				t.Errorf("Decode: got an error with an empty message")
			}
			return
		}
		if cfg == nil {
			t.Fatal("Decode: got nil config and nil error")
		}
		first := cfg.Validate()
		if second := cfg.Validate(); errString(first) != errString(second) {
			t.Errorf("Validate twice: got\n%v\nthen\n%v", first, second)
		}
		for _, e := range config.Errors(first) {
			var fe *config.FieldError
			if !errors.As(e, &fe) || fe.Path == "" || fe.Message == "" {
				t.Errorf("Validate: got %T %q, want a FieldError with a path and a message", e, e)
			}
		}
		out, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("json.Marshal of a decoded config: %v", err)
		}
		var back config.Config
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("json.Unmarshal of json.Marshal: %v\n%s", err, out)
		}
		if again, _ := json.Marshal(&back); !bytes.Equal(again, out) {
			t.Errorf("JSON round trip changed the config:\ngot  %s\nwant %s", again, out)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
