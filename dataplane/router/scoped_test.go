package router

import (
	"strings"
	"testing"
)

// TestBuildScoped builds one table per listener and checks which site each
// serves a host from.
func TestBuildScoped(t *testing.T) {
	sites := []Site[string]{
		{Domains: []string{"shared.test"}, Routes: []Route[string]{prefix("/", "a")}, Default: "a-default", Scopes: []string{"gw-a"}},
		{Domains: []string{"shared.test"}, Routes: []Route[string]{prefix("/", "b")}, Default: "b-default", Scopes: []string{"gw-b"}},
		{Domains: []string{"every.test", "*"}, Routes: []Route[string]{exact("/x", "every")}, Default: "every-default"},
		{Domains: []string{"two.test"}, Routes: []Route[string]{prefix("/", "two")}, Scopes: []string{"gw-a", "gw-b"}},
	}
	tables, err := BuildScoped(sites, []string{"gw-a", "gw-b", "http"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		scope, host, path, want string
	}{
		{"gw-a", "shared.test", "/p", "a"},
		{"gw-b", "shared.test", "/p", "b"},
		{"http", "shared.test", "/x", "every"}, // the catch-all of the site on every listener
		{"gw-a", "every.test", "/x", "every"},
		{"gw-b", "every.test", "/y", "every-default"},
		{"http", "two.test", "/", "every-default"},
		{"gw-b", "two.test", "/", "two"},
	}
	for _, tc := range cases {
		t.Run(tc.scope+" "+tc.host+tc.path, func(t *testing.T) {
			if got := lookup(tables[tc.scope], tc.host, tc.path); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if len(tables) != 3 {
		t.Errorf("%d tables, want 3", len(tables))
	}
}

func TestBuildScopedRefusesADomainTwiceInOneScope(t *testing.T) {
	tests := []struct {
		name  string
		sites []Site[string]
		want  string
	}{
		{"same scope", []Site[string]{
			{Domains: []string{"d.test"}, Scopes: []string{"gw"}},
			{Domains: []string{"d.test"}, Scopes: []string{"gw"}},
		}, "site 1: domain d.test is served twice in gw"},
		{"scoped and unscoped", []Site[string]{
			{Domains: []string{"d.test"}},
			{Domains: []string{"d.test"}, Scopes: []string{"other"}},
		}, "site 1: domain d.test is served twice in other"},
		{"catch-all in one scope", []Site[string]{
			{Domains: []string{"*"}, Scopes: []string{"gw"}},
			{Domains: []string{"*"}, Scopes: []string{"gw", "other"}},
		}, "site 1: the catch-all domain is served twice in gw"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildScoped(tc.sites, []string{"gw", "other"}, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
