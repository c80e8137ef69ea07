package ingress

import (
	"maps"
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/registry"
)

func TestParseAnnotationDefaults(t *testing.T) {
	all, err := registry.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	noTimeouts, err := registry.Select("all,-timeouts")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		specs []string
		sel   registry.Selection
		want  map[string]string
		err   string
	}{
		{"none", nil, all, map[string]string{}, ""},
		{"with and without the prefix", []string{"proxy-read-timeout=600", registry.Prefix + "ssl-redirect=false"}, all,
			map[string]string{"proxy-read-timeout": "600", "ssl-redirect": "false"}, ""},
		{"the last one wins", []string{"load-balance=ewma", "load-balance=round_robin"}, all, map[string]string{"load-balance": "round_robin"}, ""},
		{"no value", []string{"proxy-read-timeout"}, all, nil, "not KEY=VALUE"},
		{"a key without a controller default", []string{"rewrite-target=/"}, all, nil, `"rewrite-target" is not a key whose default the controller sets`},
		{"an invalid value", []string{"proxy-read-timeout=ten"}, all, nil, `--annotation-default "proxy-read-timeout=ten": `},
		{"an invalid range", []string{"whitelist-source-range=10.0.0.0/33"}, all, nil, "10.0.0.0/33"},
		{"a disabled family", []string{"proxy-read-timeout=600"}, noTimeouts, nil, "is not enabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnnotationDefaults(tt.specs, tt.sel)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestControllerDefaultKeysAreServed(t *testing.T) {
	for _, key := range ControllerDefaultKeys {
		f := registry.Owner(key)
		if f == nil {
			t.Errorf("%s: no family owns it", key)
			continue
		}
		for _, k := range f.Keys {
			if k.Name == key && k.Ignored != "" {
				t.Errorf("%s: Ramjet ignores it", key)
			}
		}
	}
}

func TestWithDefaults(t *testing.T) {
	defaults := map[string]string{"proxy-read-timeout": "600", "ssl-redirect": "false"}
	own := map[string]string{registry.Prefix + "proxy-read-timeout": "30", registry.Prefix + "ssl-redirect": "true"}
	if got := withDefaults(own, defaults); !maps.Equal(got, own) {
		t.Errorf("an object with every key: %v, want its own %v", got, own)
	}
	partial := map[string]string{registry.Prefix + "proxy-read-timeout": "30", "team": "a"}
	got := withDefaults(partial, defaults)
	want := map[string]string{registry.Prefix + "proxy-read-timeout": "30", registry.Prefix + "ssl-redirect": "false", "team": "a"}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if len(partial) != 2 {
		t.Errorf("the object's own annotations were changed: %v", partial)
	}
	if got := withDefaults(nil, defaults); len(got) != 2 {
		t.Errorf("an object without annotations: %v", got)
	}
}
