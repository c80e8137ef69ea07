package config_test

import (
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// twoListeners is base with a second listener, gw, and a second
// application, b, holding example.com too.
func twoListeners(c *config.Config) {
	c.Server.Listeners["gw"] = &config.Listener{Address: ":8080"}
	tenant(c).Applications["b"] = &config.Application{Domains: []string{"example.com"}, DefaultRoute: &config.DefaultRoute{Action: config.Action{Pool: "p"}}}
}

func TestValidateApplicationListeners(t *testing.T) {
	const B = "tenants.t.applications.b"
	tests := []struct {
		name   string
		mutate func(c *config.Config)
		want   []wantErr
	}{
		{"one domain on two listeners by two applications", func(c *config.Config) {
			twoListeners(c)
			app(c).Listeners = []string{"http"}
			tenant(c).Applications["b"].Listeners = []string{"gw"}
		}, nil},
		{"one domain twice on one listener", func(c *config.Config) {
			twoListeners(c)
			app(c).Listeners = []string{"http", "gw"}
			tenant(c).Applications["b"].Listeners = []string{"gw"}
		}, []wantErr{{B + ".domains[0]", "domain example.com is already served by t/app on listener gw"}}},
		{"a scoped application against one on every listener", func(c *config.Config) {
			twoListeners(c)
			tenant(c).Applications["b"].Listeners = []string{"gw"}
		}, []wantErr{{B + ".domains[0]", "domain example.com is already served by t/app on listener gw"}}},
		{"two applications on every listener, reported once", func(c *config.Config) { twoListeners(c) },
			[]wantErr{{B + ".domains[0]", "domain example.com is already served by t/app"}}},
		{"catch-all on two listeners", func(c *config.Config) {
			twoListeners(c)
			app(c).Domains, app(c).Listeners = []string{"*"}, []string{"http"}
			tenant(c).Applications["b"].Domains = []string{"*"}
			tenant(c).Applications["b"].Listeners = []string{"gw"}
		}, nil},
		{"catch-all twice on one listener", func(c *config.Config) {
			twoListeners(c)
			app(c).Domains, app(c).Listeners = []string{"*"}, []string{"gw"}
			tenant(c).Applications["b"].Domains = []string{"*"}
		}, []wantErr{{B + ".domains[0]", `the catch-all domain "*" is already held by t/app on listener gw`}}},
		{"unknown listener", func(c *config.Config) { app(c).Listeners = []string{"http", "nope"} },
			[]wantErr{{"tenants.t.applications.app.listeners[1]", `listener "nope" is not in server.listeners`}}},
		{"listener named twice", func(c *config.Config) { app(c).Listeners = []string{"http", "http"} },
			[]wantErr{{"tenants.t.applications.app.listeners[1]", "listener http is named twice"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mutate(c)
			checkFieldErrors(t, c.Validate(), tc.want)
		})
	}
}
