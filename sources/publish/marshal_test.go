package publish

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TestMarshalRoundTrip: the rendered file (JSON, which is YAML) decodes in
// ramjetd's strict decoder to the same configuration, for the reference
// configuration of the data plane, every translation golden case of the
// repository and a large generated one. The comparison is of the YAML
// renderings, the file's meaning: a field the JSON rendering dropped or
// changed would show.
func TestMarshalRoundTrip(t *testing.T) {
	cases := map[string]*config.Config{"generated 50 routes": benchConfig(50)}
	for _, file := range []string{"full.yaml", "minimal.yaml"} {
		cfg, _, err := config.ReadFile(filepath.Join("..", "..", "dataplane", "config", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		cases[file] = cfg
	}
	goldens, err := filepath.Glob("../../*/*/testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../testdata/*.txtar")
	goldens = append(goldens, more...)
	if len(goldens) < 50 {
		t.Fatalf("found %d golden cases, want the repository's (more than 50)", len(goldens))
	}
	for _, path := range goldens {
		if strings.Contains(path, "/gatewayapi/") || strings.Contains(path, "/offline/") {
			// The Gateway API's goldens hold listeners and a tenant, the
			// translate report's goldens a report: no tenant section.
			continue
		}
		tenant := goldenTenant(t, path)
		cases[path] = &config.Config{
			Server:  config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
			Tenants: map[string]*config.Tenant{core.TenantName: tenant},
		}
	}
	for name, cfg := range cases {
		data, err := Marshal(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := config.Decode(data)
		if err != nil {
			t.Fatalf("%s: the rendering does not decode: %v", name, err)
		}
		want, got := yamlOf(t, cfg), yamlOf(t, back)
		if want != got {
			t.Errorf("%s: the rendering decodes to another configuration:\nwant:\n%s\ngot:\n%s", name, want, got)
		}
		if again := mustMarshal(t, back); !bytes.Equal(again, data) {
			t.Errorf("%s: rendering the decoded configuration gives other bytes", name)
		}
	}
}

// goldenTenant decodes the ramjet.yaml section of a golden case (the
// controller's tenant), strictly.
func goldenTenant(t *testing.T, path string) *config.Tenant {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "-- ramjet.yaml --\n")
	if !ok {
		t.Fatalf("%s: no ramjet.yaml section", path)
	}
	section, _, _ = strings.Cut(section, "\n-- ")
	dec := yaml.NewDecoder(strings.NewReader(section))
	dec.KnownFields(true)
	var tenant config.Tenant
	if err := dec.Decode(&tenant); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &tenant
}

func yamlOf(t *testing.T, cfg *config.Config) string {
	t.Helper()
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(cfg); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
