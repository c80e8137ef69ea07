package nginxconfig

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/test/golden"
)

func TestEveryKeyHasARule(t *testing.T) {
	f, err := os.Open("testdata/ingress-nginx-keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		key := strings.TrimSpace(sc.Text())
		if key == "" || strings.HasPrefix(key, "#") {
			continue
		}
		n++
		if _, ok := ruleOf(key); !ok {
			t.Errorf("%s: no rule", key)
		}
	}
	if n < 200 {
		t.Fatalf("only %d keys read", n)
	}
}

func TestPerIngressAnnotationsAreKnown(t *testing.T) {
	for _, r := range rules {
		if r.annotation != "" && registry.Owner(r.annotation) == nil {
			t.Errorf("%s: no family has the annotation %s", r.key, r.annotation)
		}
	}
}

func TestTranslate(t *testing.T) {
	tests := []struct {
		name   string
		data   map[string]string
		key    string
		status Status
		values map[string]any // a subset of Result.Values
	}{
		{"body size", map[string]string{"proxy-body-size": "8m"}, "proxy-body-size", Mapped,
			map[string]any{"server": map[string]any{"limits": map[string]any{"max_request_body_bytes": "8MiB"}, "access_log": true}}},
		{"body size default carried", map[string]string{}, "proxy-body-size", Mapped,
			map[string]any{"server": map[string]any{"limits": map[string]any{"max_request_body_bytes": "1MiB"}, "access_log": true}}},
		{"body size unlimited", map[string]string{"proxy-body-size": "0"}, "proxy-body-size", NoCounterpart, nil},
		{"body size malformed", map[string]string{"proxy-body-size": "8 megs"}, "proxy-body-size", Invalid, nil},
		{"access log off", map[string]string{"disable-access-log": "true"}, "disable-access-log", Mapped,
			map[string]any{"server": map[string]any{"access_log": false}}},
		{"timeout", map[string]string{"client-body-timeout": "120"}, "client-body-timeout", Mapped,
			map[string]any{"server": map[string]any{"limits": map[string]any{"read_body_timeout": "2m0s"}}}},
		{"timeout beyond ramjetd's bound", map[string]string{"client-header-timeout": "600"}, "client-header-timeout", Invalid, nil},
		{"timeout with a unit", map[string]string{"client-header-timeout": "60s"}, "client-header-timeout", Invalid, nil},
		{"keep-alive off", map[string]string{"keep-alive": "0"}, "keep-alive", NoCounterpart, nil},
		{"header buffers", map[string]string{"large-client-header-buffers": "4 8k"}, "large-client-header-buffers", Mapped,
			map[string]any{"server": map[string]any{"limits": map[string]any{"max_header_bytes": "32KiB"}}}},
		{"header buffers too large", map[string]string{"large-client-header-buffers": "64 64k"}, "large-client-header-buffers", Invalid, nil},
		{"forwarded headers", map[string]string{"use-forwarded-headers": "true", "proxy-real-ip-cidr": "10.0.0.0/8, 192.168.1.1"}, "use-forwarded-headers", Mapped,
			map[string]any{"server": map[string]any{"trusted_proxies": []string{"10.0.0.0/8", "192.168.1.1"}}}},
		{"forwarded headers from anyone", map[string]string{"enable-real-ip": "true"}, "enable-real-ip", Mapped,
			map[string]any{"server": map[string]any{"trusted_proxies": []string{"0.0.0.0/0"}}}},
		{"forwarded headers, bad range", map[string]string{"use-forwarded-headers": "true", "proxy-real-ip-cidr": "10.0.0.0/33"}, "use-forwarded-headers", Invalid, nil},
		{"forwarded headers off", map[string]string{"use-forwarded-headers": "false"}, "use-forwarded-headers", Same, nil},
		{"limit status", map[string]string{"limit-req-status-code": "429", "limit-conn-status-code": "429"}, "limit-conn-status-code", Mapped,
			map[string]any{"ingressController": map[string]any{"limitStatusCode": 429}}},
		{"limit statuses that differ", map[string]string{"limit-req-status-code": "429", "limit-conn-status-code": "503"}, "limit-req-status-code", NoCounterpart,
			map[string]any{"ingressController": map[string]any{"limitStatusCode": 503}}},
		{"limit status out of range", map[string]string{"limit-req-status-code": "200"}, "limit-req-status-code", Invalid, nil},
		{"global auth", map[string]string{"global-auth-url": "http://auth.auth.svc.cluster.local/check"}, "global-auth-url", Mapped,
			map[string]any{"ingressController": map[string]any{"globalAuthURL": "http://auth.auth.svc.cluster.local/check"}}},
		{"global auth not a URL", map[string]string{"global-auth-url": "auth service"}, "global-auth-url", Invalid, nil},
		{"shutdown", map[string]string{"worker-shutdown-timeout": "5m"}, "worker-shutdown-timeout", Mapped, map[string]any{"shutdownTimeoutSeconds": 300}},
		{"log level", map[string]string{"error-log-level": "crit"}, "error-log-level", Mapped, map[string]any{"logLevel": "error"}},
		{"per-Ingress default equal to Ramjet's", map[string]string{"ssl-redirect": "true"}, "ssl-redirect", Same, nil},
		{"per-Ingress default", map[string]string{"proxy-read-timeout": "600"}, "proxy-read-timeout", Mapped,
			map[string]any{"ingressController": map[string]any{"annotationDefaults": map[string]any{"proxy-read-timeout": "600"}}}},
		{"per-Ingress default, invalid", map[string]string{"proxy-read-timeout": "ten"}, "proxy-read-timeout", Invalid, nil},
		{"per-Ingress default the controller cannot set", map[string]string{"proxy-http-version": "1.0"}, "proxy-http-version", NoCounterpart, nil},
		{"hsts default carried", map[string]string{}, "hsts", NoCounterpart, nil},
		{"hsts off", map[string]string{"hsts": "false"}, "hsts", Same, nil},
		{"bool malformed", map[string]string{"server-tokens": "yes please"}, "server-tokens", Invalid, nil},
		{"memcached timeout in milliseconds", map[string]string{"global-rate-limit-memcached-connect-timeout": "250"}, "global-rate-limit-memcached-connect-timeout", Mapped,
			map[string]any{"ingressController": map[string]any{"globalRateLimit": map[string]any{"connectTimeout": "250ms"}}}},
		{"memcached timeout too long", map[string]string{"global-rate-limit-memcached-connect-timeout": "9000"}, "global-rate-limit-memcached-connect-timeout", Invalid, nil},
		{"allowed headers", map[string]string{"global-allowed-response-headers": "X-Frame-Options, Content-Security-Policy"}, "global-allowed-response-headers", Mapped,
			map[string]any{"ingressController": map[string]any{"globalAllowedResponseHeaders": []string{"X-Frame-Options", "Content-Security-Policy"}}}},
		{"allowed headers, a bad name", map[string]string{"global-allowed-response-headers": "X Frame"}, "global-allowed-response-headers", Invalid, nil},
		{"tracing prefix", map[string]string{"otel-sampler": "AlwaysOn"}, "otel-sampler", NoCounterpart, nil},
		{"unknown", map[string]string{"no-such-key": "1"}, "no-such-key", Unknown, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Translate(tt.data)
			k := keyOf(res, tt.key)
			if k == nil {
				t.Fatalf("no outcome for %s: %+v", tt.key, res.Keys)
			}
			if k.Status != tt.status {
				t.Errorf("%s: status %s (%s), want %s", tt.key, k.Status, k.Note, tt.status)
			}
			if k.Status != Same && k.Status != Mapped && k.Note == "" {
				t.Errorf("%s: no note says what happens", tt.key)
			}
			checkSubset(t, "values", res.Values, tt.values)
		})
	}
}

func keyOf(res *Result, key string) *Key {
	for i := range res.Keys {
		if res.Keys[i].Key == key {
			return &res.Keys[i]
		}
	}
	return nil
}

// checkSubset checks that want's entries are in got.
func checkSubset(t *testing.T, path string, got, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s.%s missing", path, k)
			continue
		}
		if wm, ok := w.(map[string]any); ok {
			gm, _ := g.(map[string]any)
			checkSubset(t, path+"."+k, gm, wm)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s.%s = %#v, want %#v", path, k, g, w)
		}
	}
}

// TestValuesAreTheChartsAndRamjetds checks that the values every mapped key
// gives are values of the chart, and that server: is a server section
// ramjetd takes.
func TestValuesAreTheChartsAndRamjetds(t *testing.T) {
	all := map[string]string{
		"proxy-body-size": "8m", "client-body-timeout": "30", "client-header-timeout": "30", "keep-alive": "30",
		"http2-max-concurrent-streams": "64", "large-client-header-buffers": "4 8k", "server-tokens": "true",
		"disable-access-log": "true", "use-forwarded-headers": "true", "limit-req-status-code": "429",
		"global-auth-url": "http://auth.auth.svc.cluster.local/", "worker-shutdown-timeout": "60s", "error-log-level": "warn",
		"proxy-read-timeout": "600", "whitelist-source-range": "10.0.0.0/8", "custom-http-errors": "404,503",
		"global-allowed-response-headers": "X-Frame-Options", "global-rate-limit-memcached-host": "memcached.cache",
		"global-rate-limit-memcached-port": "11311", "global-rate-limit-memcached-connect-timeout": "100",
		"global-rate-limit-memcached-pool-size": "20", "global-rate-limit-status-code": "503",
	}
	res := Translate(all)
	for _, k := range res.Keys {
		if k.Status != Mapped && !k.Default {
			t.Errorf("%s: %s (%s), want mapped", k.Key, k.Status, k.Note)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "charts", "ramjet", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart map[string]any
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	for _, k := range res.Keys {
		for _, s := range k.Settings {
			if strings.HasPrefix(s.Path, "server.") {
				continue
			}
			if key, ok := strings.CutPrefix(s.Path, "ingressController.annotationDefaults."); ok {
				if !slices.Contains(ingress.ControllerDefaultKeys, key) {
					t.Errorf("%s: --annotation-default does not take %s", k.Key, key)
				}
				continue
			}
			if !hasPath(chart, strings.Split(s.Path, ".")) {
				t.Errorf("%s: %s is not a value of charts/ramjet/values.yaml", k.Key, s.Path)
			}
		}
	}
	server, err := yaml.Marshal(map[string]any{"server": res.Values["server"]})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Server config.Server `yaml:"server"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(server))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("server section ramjetd does not take: %v\n%s", err, server)
	}
	got := []any{cfg.Server.Limits.MaxRequestBodyBytes, cfg.Server.Limits.MaxHeaderBytes, cfg.Server.Limits.ReadBodyTimeout.Std().String(), cfg.Server.AccessLog, cfg.Server.ServerTokens}
	want := []any{config.ByteSize(8 << 20), config.ByteSize(32 << 10), "30s", false, true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("server section read as %v, want %v", got, want)
	}
}

func hasPath(m map[string]any, path []string) bool {
	v, ok := m[path[0]]
	if !ok || len(path) == 1 {
		return ok
	}
	next, ok := v.(map[string]any)
	return ok && hasPath(next, path[1:])
}

func TestRead(t *testing.T) {
	tests := []struct {
		name, input string
		want        map[string]string
		err         string
	}{
		{"ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\ndata:\n  keep-alive: \"30\"\n",
			map[string]string{"keep-alive": "30"}, ""},
		{"List", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n- kind: ConfigMap\n  metadata: {name: c}\n  data: {hsts: \"false\"}\n",
			map[string]string{"hsts": "false"}, ""},
		{"chart values", "controller:\n  replicaCount: 2\n  config:\n    use-forwarded-headers: true\n    keep-alive: 30\n",
			map[string]string{"use-forwarded-headers": "true", "keep-alive": "30"}, ""},
		{"unquoted value of a ConfigMap", "kind: ConfigMap\nmetadata: {name: c}\ndata:\n  keep-alive: 30\n", nil, `"keep-alive" is not a string`},
		{"two ConfigMaps", "kind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n", nil, "holds 2 ConfigMaps"},
		{"nothing", "kind: Service\n", nil, "holds no ConfigMap"},
		{"not YAML", "kind: [\n", nil, "document 1: not YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read("in.yaml", []byte(tt.input))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("read %v, want %v", got, tt.want)
			}
		})
	}
}

// TestGolden translates each testdata/*.txtar's input.yaml and compares the
// text output with its values section; go test -update rewrites them.
func TestGolden(t *testing.T) {
	golden.RunCases(t, "testdata/*.txtar", func(t *testing.T, a *golden.Archive) map[string]string {
		data, err := Read("input.yaml", []byte(a.Get("input.yaml")))
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := Translate(data).Write(&out, "text"); err != nil {
			t.Fatal(err)
		}
		var values map[string]any
		if err := yaml.Unmarshal([]byte(out.String()), &values); err != nil {
			t.Errorf("the output is not YAML: %v", err)
		}
		return map[string]string{"values.yaml": out.String()}
	})
}
