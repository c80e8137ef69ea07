package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// configFor writes the configurations of every contender and the backend
// for a cell with external authentication a (or passthrough), in a fresh
// run folder.
func configFor(t *testing.T, a auth, passthrough ...bool) (configData, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	cert, err := writeCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := configData{Dir: dir, Docroot: dir + "/www", HTTP: 8001, HTTPS: 8002, Backend: 8003, BackendTLS: 8004,
		Cert: cert.cert, Key: cert.key, Bundle: cert.bundle, Auth: a, Passthrough: len(passthrough) > 0 && passthrough[0]}
	texts := map[string]string{}
	for _, k := range append(contenders("ramjetd"), contender{name: "backend", file: "backend.conf", config: backendConfig}) {
		path, err := writeConfig(k.config, d, k.file)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		texts[k.name] = string(data)
	}
	return d, texts
}

// TestRamjetdAuthConfig: ramjetd's configuration passes ramjetd's own
// validation in every mode, and has the external_auth policy (with a
// cache when cached) exactly in the authenticated ones.
func TestRamjetdAuthConfig(t *testing.T) {
	for _, tc := range []struct {
		auth         auth
		policy, keep bool
		cacheKey     []string
	}{
		{auth: noAuth},
		{auth: authAsked, policy: true},
		{auth: authCached, policy: true, cacheKey: []string{"header:Authorization"}},
	} {
		t.Run(modeName(tc.auth), func(t *testing.T) {
			_, texts := configFor(t, tc.auth)
			cfg, err := config.Decode([]byte(texts["ramjetd"]))
			if err != nil {
				t.Fatalf("decode: %v\n%s", err, texts["ramjetd"])
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("validate: %v\n%s", err, texts["ramjetd"])
			}
			route := cfg.Tenants["bench"].Applications["all"].Routes[0]
			var ea *config.ExternalAuth
			if route.Policies != nil {
				ea = route.Policies.ExternalAuth
			}
			if (ea != nil) != tc.policy {
				t.Fatalf("external_auth %+v, want one: %v", ea, tc.policy)
			}
			if ea == nil {
				return
			}
			if ea.URL != "http://127.0.0.1:8003/auth" || ea.Keepalive == nil || ea.Keepalive.Connections != 128 || ea.Keepalive.Requests != 1000000 {
				t.Errorf("external_auth %+v, want the backend's /auth with 128 kept-alive connections of a million requests", ea)
			}
			var key []string
			if ea.Cache != nil {
				key = ea.Cache.Key
				if allowed, unauthorized, _ := ea.Cache.Durations(); allowed != 5*time.Minute || unauthorized != 5*time.Minute {
					t.Errorf("cache durations %s and %s, want 5m as nginx's proxy_cache_valid", allowed, unauthorized)
				}
			}
			if !slices.Equal(key, tc.cacheKey) {
				t.Errorf("cache key %v, want %v", key, tc.cacheKey)
			}
		})
	}
}

// TestPassthroughConfigs: with Passthrough every proxy splices the HTTPS
// port's connections that name passthroughHost to the backend's HTTPS
// port, and terminates no TLS there; without it none does.
func TestPassthroughConfigs(t *testing.T) {
	for _, on := range []bool{false, true} {
		_, texts := configFor(t, noAuth, on)
		cfg, err := config.Decode([]byte(texts["ramjetd"]))
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, texts["ramjetd"])
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("validate: %v\n%s", err, texts["ramjetd"])
		}
		app := cfg.Tenants["bench"].Applications["passthrough"]
		if got := app != nil && app.Passthrough != nil && app.Passthrough.Pool == "backend_tls" && slices.Equal(app.Domains, []string{passthroughHost}) &&
			slices.Equal(cfg.Tenants["bench"].Pools["backend_tls"].Members, []config.Member{{Address: "127.0.0.1:8004"}}); got != on {
			t.Errorf("passthrough %v: ramjetd's passthrough application %+v", on, app)
		}
		want := map[string][]string{
			"nginx":   {"load_module /usr/lib/nginx/modules/ngx_stream_module.so;", "ssl_preread on;", "listen 127.0.0.1:8002 backlog=4096;", "map $ssl_preread_server_name $passthrough { localhost backend_tls; }", "server 127.0.0.1:8004;"},
			"HAProxy": {"mode tcp", "bind 127.0.0.1:8002\n", "use_backend backend_tls if { req_ssl_sni -i localhost }", "server backend 127.0.0.1:8004"},
		}
		terminating := map[string]string{"nginx": "listen 127.0.0.1:8002 ssl", "HAProxy": "bind 127.0.0.1:8002 ssl"}
		for name, lines := range want {
			for _, w := range lines {
				if strings.Contains(texts[name], w) != on {
					t.Errorf("passthrough %v: %s has %q: %v\n%s", on, name, w, !on, texts[name])
				}
			}
			if strings.Contains(texts[name], terminating[name]) == on {
				t.Errorf("passthrough %v: %s terminates TLS on the HTTPS port: %v\n%s", on, name, !on, texts[name])
			}
		}
		if !strings.Contains(texts["backend"], "listen 127.0.0.1:8004 ssl backlog=4096;") {
			t.Errorf("backend.conf has no HTTPS port:\n%s", texts["backend"])
		}
	}
}

// TestNginxAuthConfig: nginx's configuration asks the backend's /auth with
// auth_request exactly in the authenticated modes, caches in the cached
// one, and the backend's /auth lets the bench's token through.
func TestNginxAuthConfig(t *testing.T) {
	for _, tc := range []struct {
		auth        auth
		want, never []string
	}{
		{auth: noAuth, never: []string{"auth_request", "proxy_cache"}},
		{auth: authAsked,
			want:  []string{"auth_request /_auth;", "location = /_auth {", "internal;", "proxy_pass http://backend/auth;", "proxy_pass_request_body off;", `proxy_set_header Connection "";`},
			never: []string{"proxy_cache"}},
		{auth: authCached,
			want: []string{"auth_request /_auth;", "proxy_cache auth;", "proxy_cache_key $http_authorization;", "proxy_cache_valid 200 401 5m;",
				"/nginx-authcache\" levels=1 keys_zone=auth:1m;"}},
	} {
		t.Run(modeName(tc.auth), func(t *testing.T) {
			_, texts := configFor(t, tc.auth)
			nginx := texts["nginx"]
			for _, w := range tc.want {
				if !strings.Contains(nginx, w) {
					t.Errorf("nginx.conf lacks %q:\n%s", w, nginx)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(nginx, n) {
					t.Errorf("nginx.conf has %q:\n%s", n, nginx)
				}
			}
			if want := `if ($http_authorization != "` + authToken + `") { return 401; }`; !strings.Contains(texts["backend"], want) {
				t.Errorf("backend.conf lacks %q:\n%s", want, texts["backend"])
			}
		})
	}
}

// TestAuthCells: HAProxy runs no authenticated cell, ramjetd and nginx run
// all, and the load of an authenticated cell (and only of one) sends the
// bench's Authorization header, before the URL.
func TestAuthCells(t *testing.T) {
	url := "http://127.0.0.1:1/1k"
	for _, c := range allCells {
		for _, k := range contenders("ramjetd") {
			if want := c.auth == noAuth || k.name != "HAProxy"; k.runs(c) != want {
				t.Errorf("%s runs %s: %v, want %v", k.name, c.id, k.runs(c), want)
			}
		}
		for _, cmd := range []loadCommand{c.fullLoad(url, 64, time.Second), c.fixedRate(url, time.Second, "/tmp/log")} {
			argv := cmd.argv
			i := slices.Index(argv, "-H")
			switch {
			case argv[len(argv)-1] != url:
				t.Errorf("%s: %v does not end with the URL", c.id, argv)
			case c.auth == noAuth && i >= 0:
				t.Errorf("%s: %v sends a header", c.id, argv)
			case c.auth != noAuth && (i < 0 || argv[i+1] != authHeader+": "+authToken):
				t.Errorf("%s: %v lacks -H %q", c.id, argv, authHeader+": "+authToken)
			}
		}
	}
}

// modeName names a subtest after a, in letters only (the run folder is
// named after it, and configurations take letters, digits and /._- only).
func modeName(a auth) string {
	if a == noAuth {
		return "none"
	}
	return string(a)
}
