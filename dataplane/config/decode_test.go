package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TestDecodeFull decodes and validates testdata/full.yaml, which uses every
// field, and checks a sample of the decoded values.
func TestDecodeFull(t *testing.T) {
	cfg := mustDecode(t, "full.yaml")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate(testdata/full.yaml): got errors, want none:\n%v", err)
	}

	lim := cfg.Server.Limits
	shop := cfg.Tenants["shop"]
	blog := cfg.Tenants["blog"]
	if shop == nil || blog == nil {
		t.Fatalf("tenants: got %v, want shop and blog", cfg.Tenants)
	}
	front := shop.Applications["storefront"]
	if front == nil || len(front.Routes) != 6 {
		t.Fatalf("storefront: got %+v, want an application with 6 routes", front)
	}
	apiV2 := shop.Pools["api-v2"]
	static := shop.Pools["static"]

	checks := []struct {
		name      string
		got, want any
	}{
		{"listeners", len(cfg.Server.Listeners), 5},
		{"https tls cert", cfg.Server.Listeners["https"].TLS.CertFile, "/etc/ramjet/default.crt"},
		{"generated tls", *cfg.Server.Listeners["https-generated"].TLS, config.ListenerTLS{}},
		{"health", cfg.Server.Health.Address, "localhost:9090"},
		{"admin socket", cfg.Server.Admin.Socket, "/run/ramjet/admin.sock"},
		{"max_header_bytes 64k", lim.MaxHeaderBytes, config.ByteSize(64 << 10)},
		{"max_request_body_bytes 10MiB", lim.MaxRequestBodyBytes, config.ByteSize(10 << 20)},
		{"read_header_timeout 15s", lim.ReadHeaderTimeout.Std(), 15 * time.Second},
		{"idle_timeout 1m30s", lim.IdleTimeout.Std(), 90 * time.Second},
		{"http2_max_concurrent_streams", lim.HTTP2MaxConcurrentStreams, uint32(256)},
		{"trusted_proxies", strings.Join(cfg.Server.TrustedProxies, ","), "10.0.0.0/8,192.168.1.7,fd00::/8,::ffff:172.16.0.1"},
		{"access_log", cfg.Server.AccessLog, true},
		{"server_tokens", cfg.Server.ServerTokens, true},

		{"shop default route status", shop.DefaultRoute.Action.Respond.Status, 404},
		{"shop default route content type", shop.DefaultRoute.Action.Respond.ContentType, "text/html; charset=utf-8"},
		{"blog default route redirect", *blog.DefaultRoute.Action.Redirect, config.Redirect{URL: "https://example.com/", Code: 302}},
		{"domains", strings.Join(front.Domains, ","), "shop.example.com,*.shop.example.com,xn--bcher-kva.example"},
		{"app tls", *front.TLS, config.CertificateFiles{CertFile: "/etc/ramjet/shop.crt", KeyFile: "/etc/ramjet/shop.key"}},
		{"https_redirect", front.HTTPSRedirect, true},
		{"app default route", front.DefaultRoute.Action.Pool, "static"},
		{"exact path", front.Routes[0].Match.Path, config.PathMatch{Exact: "/api/health"}},
		{"respond body", front.Routes[0].Action.Respond.Body, "ok"},
		{"header matchers", front.Routes[1].Match.Headers, []config.HeaderMatch{
			{Name: "X-Canary", Exact: "yes"}, {Name: "X-Version", Regex: "v[0-9]+"}, {Name: "X-Present"},
		}},
		{"cookie matchers", front.Routes[1].Match.Cookies, []config.CookieMatch{
			{Name: "session"}, {Name: "beta", Exact: "1"}, {Name: "ab", Regex: "group-[ab]"},
		}},
		{"weighted pools", front.Routes[1].Action.Pools, []config.WeightedPool{
			{Pool: "api-v2", Weight: 90}, {Pool: "api-v3", Weight: 10}, {Pool: "api-dark", Weight: 0},
		}},
		{"route https_redirect unset", front.Routes[0].HTTPSRedirect == nil, true},
		{"route https_redirect false", front.Routes[2].HTTPSRedirect != nil && !*front.Routes[2].HTTPSRedirect, true},
		{"regex path", front.Routes[3].Match.Path.Regex, `/img/.*\.(png|jpe?g)$`},
		{"redirect 308", *front.Routes[4].Action.Redirect, config.Redirect{URL: "https://shop.example.com/new", Code: 308}},
		{"redirect without code", *front.Routes[5].Action.Redirect, config.Redirect{URL: "/new"}},

		{"members, both forms", apiV2.Members, []config.Member{
			{Address: "10.0.1.1:8080"}, {Address: "10.0.1.2:8080", Weight: 3}, {Address: "[fd00::12]:8080"},
		}},
		{"weight 1000", shop.Pools["api-dark"].Members, []config.Member{{Address: "dark.internal:443", Weight: 1000}}},
		{"retries: 0 is set", apiV2.Retries != nil && *apiV2.Retries == 0, true},
		{"retries unset is nil", shop.Pools["api-v3"].Retries == nil, true},
		{"retries: 10", blog.Pools["blog"].Retries != nil && *blog.Pools["blog"].Retries == 10, true},
		{"connect_timeout 2s", apiV2.ConnectTimeout.Std(), 2 * time.Second},
		{"connect_timeout 0", blog.Pools["blog"].ConnectTimeout, config.Duration(0)},
		{"response_timeout 24h", blog.Pools["blog"].ResponseTimeout.Std(), 24 * time.Hour},
		{"schemes", []config.Scheme{apiV2.Scheme, shop.Pools["api-v3"].Scheme, shop.Pools["api-dark"].Scheme, static.Scheme, blog.Pools["blog"].Scheme},
			[]config.Scheme{config.SchemeHTTP, config.SchemeH2C, config.SchemeHTTPS, config.SchemeH2, ""}},
		{"members_from", []config.MembersFrom{apiV2.MembersFrom, shop.Pools["api-v3"].MembersFrom, static.MembersFrom},
			[]config.MembersFrom{"", config.MembersAPI, config.MembersStatic}},
		{"balance", []config.Balance{apiV2.Balance, shop.Pools["api-v3"].Balance, static.Balance},
			[]config.Balance{config.BalanceRoundRobin, config.BalanceLeastConn, config.BalanceHash}},
		{"pool tls", *shop.Pools["api-dark"].TLS, config.PoolTLS{ServerName: "dark.internal", CAFile: "/etc/ramjet/ca.pem",
			CertFile: "/etc/ramjet/client.crt", KeyFile: "/etc/ramjet/client.key"}},
		{"hash by client_ip", *shop.Pools["api-dark"].Hash, config.Hash{By: config.HashByClientIP}},
		{"hash by header", *blog.Pools["blog"].Hash, config.Hash{By: config.HashByHeader, Header: "X-User-ID"}},
		{"hash by request_uri", *blog.Pools["blog-pages"].Hash, config.Hash{By: config.HashByRequestURI}},
		{"hash by cookie_value", *blog.Pools["blog-sessions"].Hash, config.Hash{By: config.HashByCookieValue, CookieName: "blog_session"}},
		{"hash by cookie", *static.Hash.Cookie, config.AffinityCookie{
			Name: "STATIC_AFFINITY", Path: "/", Domain: ".shop.example.com",
			MaxAge: config.Duration(24 * time.Hour), Secure: true, SameSite: "Lax",
		}},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !equal(c.got, c.want) {
				t.Errorf("got %#v, want %#v", c.got, c.want)
			}
		})
	}
}

// TestDecodeMinimal checks the smallest useful configuration.
func TestDecodeMinimal(t *testing.T) {
	cfg := mustDecode(t, "minimal.yaml")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate(testdata/minimal.yaml): got %v, want no error", err)
	}
	if got := cfg.Tenants["default"].Pools["web"].Members; !equal(got, []config.Member{{Address: "127.0.0.1:3000"}}) {
		t.Errorf("members: got %#v, want one member 127.0.0.1:3000", got)
	}
}

// head is the first nine lines of the files of TestDecodeErrors, so that
// each case's own lines start at line 10.
const head = `server:
  listeners:
    http:
      address: ":80"
tenants:
  t:
    pools:
      p:
        members:
`

// selfContradiction finds messages such as "found a mapping, want a
// mapping" or `"-1" is a number, want a number (uint32)`, which do not tell
// the author what is wrong.
var selfContradiction = regexp.MustCompile(`(?:is|found) (a \w+), want (a \w+)`)

// TestDecodeErrors checks that each kind of decoding mistake is an error
// that names its line and says what is wrong in the file's terms.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		yaml   string
		line   int // 0: the message names no line
		phrase string
	}{
		{
			name:   "unknown top-level key",
			yaml:   head + "          - 10.0.0.1:80\nservers: {}\n",
			line:   11,
			phrase: `unknown field "servers" in config`,
		},
		{
			name:   "unknown key in server",
			yaml:   "server:\n  listeners: {}\n  acces_log: true\n",
			line:   3,
			phrase: `unknown field "acces_log" in server`,
		},
		{
			name:   "unknown key in listener",
			yaml:   "server:\n  listeners:\n    http:\n      adress: \":80\"\n",
			line:   4,
			phrase: `unknown field "adress" in listener`,
		},
		{
			name:   "unknown key in pool",
			yaml:   head + "          - 10.0.0.1:80\n        retrys: 2\n",
			line:   11,
			phrase: `unknown field "retrys" in pool`,
		},
		{
			name:   "unknown key in member mapping",
			yaml:   head + "          - address: 10.0.0.1:80\n            weigth: 2\n",
			line:   11,
			phrase: `unknown field "weigth"`,
		},
		{
			name:   "unknown key in route match",
			yaml:   "tenants:\n  t:\n    applications:\n      a:\n        routes:\n          - match:\n              path: {prefix: /}\n              header: []\n",
			line:   8,
			phrase: `unknown field "header" in match`,
		},
		{
			name:   "string where a number is wanted",
			yaml:   head + "          - 10.0.0.1:80\n        retries: three\n",
			line:   11,
			phrase: `"three" is a string, want a number`,
		},
		{
			name:   "string where a member weight is wanted",
			yaml:   head + "          - address: 10.0.0.1:80\n            weight: heavy\n",
			line:   11,
			phrase: `"heavy" is a string, want a number`,
		},
		{
			name:   "list where a mapping is wanted",
			yaml:   "server:\n  listeners: {}\n  limits: [1, 2]\n",
			line:   3,
			phrase: "found a list, want a mapping",
		},
		{
			name:   "mapping where a string is wanted",
			yaml:   "server:\n  listeners:\n    http:\n      address: {port: 80}\n",
			line:   4,
			phrase: "found a mapping, want a string",
		},
		{
			name:   "mapping where a list is wanted",
			yaml:   "server:\n  listeners: {}\n  trusted_proxies: {a: 1}\n",
			line:   3,
			phrase: "found a mapping, want a list",
		},
		{
			name:   "string where a boolean is wanted",
			yaml:   "server:\n  listeners: {}\n  access_log: maybe\n",
			line:   3,
			phrase: `"maybe" is a string, want a boolean (true or false)`,
		},
		{
			// Balance, Scheme, MembersFrom and HashBy are string types of
			// package config, not mappings.
			name:   "mapping where a balance name is wanted",
			yaml:   head + "          - 10.0.0.1:80\n        balance: {kind: hash}\n",
			line:   11,
			phrase: "found a mapping, want a string",
		},
		{
			name:   "list where a scheme is wanted",
			yaml:   head + "          - 10.0.0.1:80\n        scheme: [http, h2c]\n",
			line:   11,
			phrase: "found a list, want a string",
		},
		{
			name:   "negative member weight",
			yaml:   head + "          - address: 10.0.0.1:80\n            weight: -1\n",
			line:   11,
			phrase: `"-1"`,
		},
		{
			name:   "member that is a list",
			yaml:   head + "          - [10.0.0.1, 80]\n",
			line:   10,
			phrase: "a member is an address or a mapping",
		},
		{
			name:   "duration in words",
			yaml:   head + "          - 10.0.0.1:80\n        connect_timeout: 10 seconds\n",
			line:   11,
			phrase: `"10 seconds" is not a duration`,
		},
		{
			name:   "duration without unit",
			yaml:   "server:\n  listeners: {}\n  limits:\n    idle_timeout: 10\n",
			line:   4,
			phrase: `"10" is not a duration`,
		},
		{
			name:   "negative duration",
			yaml:   "server:\n  listeners: {}\n  limits:\n    idle_timeout: -5s\n",
			line:   4,
			phrase: `"-5s" is not a duration`,
		},
		{
			name:   "size in words",
			yaml:   "server:\n  listeners: {}\n  limits:\n    max_header_bytes: ten\n",
			line:   4,
			phrase: `"ten" is not a size`,
		},
		{
			name:   "size with an unknown unit",
			yaml:   "server:\n  listeners: {}\n  limits:\n    max_request_body_bytes: 10MB\n",
			line:   4,
			phrase: `"10MB" is not a size`,
		},
		{
			name:   "duplicate key",
			yaml:   "server:\n  listeners: {}\n  listeners: {}\n",
			line:   3,
			phrase: `mapping key "listeners" already defined at line 2`,
		},
		{
			name:   "duplicate pool",
			yaml:   head + "          - 10.0.0.1:80\n      p:\n        members: []\n",
			line:   11,
			phrase: `mapping key "p" already defined at line 8`,
		},
		{
			name:   "duplicate key in member mapping",
			yaml:   head + "          - address: 10.0.0.1:80\n            address: 10.0.0.2:80\n",
			line:   11,
			phrase: `mapping key "address" already defined at line 10`,
		},
		{
			name:   "second document",
			yaml:   head + "          - 10.0.0.1:80\n---\nserver: {}\n",
			line:   11,
			phrase: "a second YAML document",
		},
		{
			name:   "syntax error in a second document",
			yaml:   head + "          - 10.0.0.1:80\n---\nserver:\n\tlisteners: {}\n",
			line:   13,
			phrase: "found character that cannot start any token",
		},
		{
			name:   "garbage character",
			yaml:   "server:\n  listeners: {}\n %%%\n",
			line:   3,
			phrase: "found character that cannot start any token",
		},
		{
			name:   "unterminated quote",
			yaml:   "server:\n  listeners: {}\n  admin: {socket: \"/run/x}\n",
			line:   3,
			phrase: "found unexpected end of stream",
		},
		{
			name:   "tab indentation",
			yaml:   "server:\n\tlisteners: {}\n",
			line:   2,
			phrase: "found character that cannot start any token",
		},
		{
			name:   "nested mapping on one line",
			yaml:   "server:\n  listeners:\n    http: address: \":80\"\n",
			line:   3,
			phrase: "mapping values are not allowed in this context",
		},
		{
			// yaml.v3 leaves the line out when the problem is on the
			// first line; Decode must still name it.
			name:   "nested mapping on the first line",
			yaml:   "server: listeners: {}\n",
			line:   1,
			phrase: "mapping values are not allowed in this context",
		},
		{
			name:   "plain text",
			yaml:   "this is not a configuration\n",
			line:   1,
			phrase: `is a string, want a mapping`,
		},
		{
			name:   "empty file",
			yaml:   "",
			phrase: "the configuration is empty",
		},
		{
			name:   "only comments and blank lines",
			yaml:   "# nothing yet\n\n   \n# still nothing\n",
			phrase: "the configuration is empty",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Decode([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("Decode: got no error, want one with %q at line %d", tc.phrase, tc.line)
			}
			if cfg != nil {
				t.Errorf("Decode: got a config with the error, want nil")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.phrase) {
				t.Errorf("Decode: got error %q, want it to contain %q", msg, tc.phrase)
			}
			if tc.line > 0 && !mentionsLine(msg, tc.line) {
				t.Errorf("Decode: got error %q, want it to name line %d", msg, tc.line)
			}
			if m := selfContradiction.FindStringSubmatch(msg); m != nil && m[1] == m[2] {
				t.Errorf("Decode: got error %q, which contradicts itself (%q)", msg, m[0])
			}
			if strings.HasPrefix(msg, "yaml: ") || strings.Contains(msg, "config.") || strings.Contains(msg, "!!") {
				t.Errorf("Decode: got error %q, want it in the file's terms (no yaml:, config. or !! jargon)", msg)
			}
		})
	}
}

// TestDecodeReportsAllTypeErrors checks that several mistakes of type and
// spelling are reported together, one per line of the message.
func TestDecodeReportsAllTypeErrors(t *testing.T) {
	yaml := head + "          - 10.0.0.1:80\n        retrys: 2\n        retries: many\n  u:\n    pool: {}\n"
	_, err := config.Decode([]byte(yaml))
	if err == nil {
		t.Fatal("Decode: got no error, want three")
	}
	want := []string{
		`line 11: unknown field "retrys" in pool`,
		`line 12: "many" is a string, want a number (int)`,
		`line 14: unknown field "pool" in tenant`,
	}
	got := config.Errors(err)
	if len(got) != len(want) {
		t.Fatalf("Errors(Decode): got %d errors:\n%v\nwant %d:\n%s", len(got), err, len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if got[i].Error() != want[i] {
			t.Errorf("Errors(Decode)[%d]: got %q, want %q", i, got[i], want[i])
		}
	}
	if err.Error() != strings.Join(want, "\n") {
		t.Errorf("Decode error text: got %q, want one problem per line %q", err.Error(), strings.Join(want, "\n"))
	}
}

func TestReadFile(t *testing.T) {
	t.Run("valid file", func(t *testing.T) {
		path := filepath.Join("testdata", "minimal.yaml")
		cfg, data, err := config.ReadFile(path)
		if err != nil {
			t.Fatalf("ReadFile: got %v, want no error", err)
		}
		if want := mustRead(t, "minimal.yaml"); string(data) != string(want) {
			t.Errorf("ReadFile: got %d bytes, want the %d bytes of the file", len(data), len(want))
		}
		if cfg == nil || cfg.Server.Listeners["http"] == nil {
			t.Errorf("ReadFile: got config %+v, want the listener http", cfg)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, _, err := config.ReadFile(filepath.Join(t.TempDir(), "nope.yaml"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("ReadFile: got %v, want an error wrapping os.ErrNotExist", err)
		}
	})
	t.Run("decode error names the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ramjet.yaml")
		if err := os.WriteFile(path, []byte("server:\n  listners: {}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := config.ReadFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !mentionsLine(err.Error(), 2) {
			t.Errorf("ReadFile: got %v, want %q followed by the line 2 error", err, path+": ")
		}
	})
	t.Run("file too large", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "big.yaml")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(config.MaxFileBytes + 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, _, err = config.ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("ReadFile(%d bytes): got %v, want a 'larger than' error", config.MaxFileBytes+1, err)
		}
	})
}
