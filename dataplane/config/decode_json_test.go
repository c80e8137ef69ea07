package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestJSONNamesMatchYAML: every field of the configuration has the same
// name in JSON as in YAML, and no field is embedded, so that the JSON fast
// path reads exactly the keys the YAML decoder reads.
func TestJSONNamesMatchYAML(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Anonymous {
				t.Errorf("%s.%s is embedded; the two decoders would treat it differently", path, f.Name)
			}
			y, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			j, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if y == "" || y != j {
				t.Errorf("%s.%s: yaml name %q, json name %q; want the same, set", path, f.Name, y, j)
			}
			walk(f.Type, path+"."+y)
		}
	}
	walk(reflect.TypeFor[Config](), "config")
	if len(seen) < 20 {
		t.Fatalf("walked %d struct types; want the whole configuration", len(seen))
	}
}

// TestDecodeJSONAgreesWithYAML: the JSON rendering of every test
// configuration is read by the fast path, to what the YAML decoder reads
// from the same bytes.
func TestDecodeJSONAgreesWithYAML(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("testdata: %v", err)
	}
	compared := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := decodeYAML(data)
		if err != nil {
			continue // a file of decoding errors
		}
		compared++
		rendered, err := json.MarshalIndent(cfg, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		rendered = append([]byte("# a comment, as ramjet-ingress writes\n\n"), rendered...)
		fast, ok := decodeJSON(rendered)
		if !ok {
			t.Fatalf("%s: the fast path refused the JSON rendering", file)
		}
		slow, err := decodeYAML(rendered)
		if err != nil {
			t.Fatalf("%s: the YAML decoder refused the JSON rendering: %v", file, err)
		}
		if a, b := meaning(t, fast), meaning(t, slow); a != b || a != meaning(t, cfg) {
			t.Errorf("%s: the fast path read\n%s\nthe YAML decoder\n%s", file, a, b)
		}
	}
	if compared < 2 {
		t.Errorf("compared %d files; testdata has full.yaml and minimal.yaml", compared)
	}
}

// TestDecodeJSONFallsBack: what the fast path does not accept goes to the
// YAML decoder, whose error names the line.
func TestDecodeJSONFallsBack(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"duplicate key", `{"server": {}, "server": {}}`, `line 1: mapping key "server" already defined`},
		{"name in another case", `{"Server": {}}`, `unknown field "Server"`},
		{"unknown field", `{"tenants": {"t": {"pools": {"p": {"retrys": 2}}}}}`, `unknown field "retrys" in pool`},
		{"second document", "{}\n---\n{}\n", "a second YAML document"},
		{"wrong type", `{"tenants": {"t": {"pools": {"p": {"retries": "two"}}}}}`, `"two" is a string, want a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := decodeJSON([]byte(tc.data)); ok {
				t.Fatal("the fast path accepted it")
			}
			_, err := Decode([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// A member written as its address is YAML's form; the fast path leaves
	// it to the YAML decoder, which reads it.
	cfg, err := Decode([]byte(`{"tenants": {"t": {"pools": {"p": {"members": ["10.0.0.1:80"]}}}}}`))
	if err != nil || cfg.Tenants["t"].Pools["p"].Members[0].Address != "10.0.0.1:80" {
		t.Errorf("Decode = %v, %v; want the member read by the YAML decoder", cfg, err)
	}
}

// FuzzDecodeJSON: whatever the fast path accepts, the YAML decoder reads to
// the same configuration, or refuses only for YAML's own syntax (JSON is
// YAML but for corner cases such as keys over 1024 characters), never for
// a type or a field.
func FuzzDecodeJSON(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if cfg, err := decodeYAML(data); err == nil {
			rendered, _ := json.MarshalIndent(cfg, "", " ")
			f.Add(rendered)
		}
	}
	f.Add([]byte(`{"server": {"limits": {"idle_timeout": "1m", "max_header_bytes": "64k"}}}`))
	f.Add([]byte(`{"tenants": {"t": {"pools": {"p": {"members": [{"address": "a:1", "weight": 2}], "https_redirect": true}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeJSON(data)
		if !ok {
			return
		}
		slow, err := decodeYAML(data)
		if err != nil {
			var te *yaml.TypeError
			if errors.As(err, &te) || strings.Contains(err.Error(), "unknown field") || strings.Contains(err.Error(), "want") ||
				strings.Contains(err.Error(), "already defined") || strings.Contains(err.Error(), "second YAML document") {
				t.Fatalf("the fast path accepted what the YAML decoder refuses for its content: %v\n%s", err, data)
			}
			return
		}
		if a, b := meaning(t, fast), meaning(t, slow); a != b {
			t.Fatalf("the fast path read\n%s\nthe YAML decoder\n%s\nfrom\n%s", a, b, data)
		}
	})
}

// meaning is a configuration's YAML rendering, to compare two decodings.
func meaning(t *testing.T, cfg *Config) string {
	t.Helper()
	var b bytes.Buffer
	if err := yaml.NewEncoder(&b).Encode(cfg); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
