package all_test

import (
	"encoding/pem"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// marker is in every hostile value, so that the test can find where the
// value went.
const marker = "Injected"

// hostileValues are the injection corpus: what broke other controllers
// (configuration text, headers, file paths) and what a parser may choke on.
var hostileValues = []string{
	"a\r\nX-" + marker + ": 1",
	"a\nX-" + marker,
	"a,\r\n" + marker + "\r\n,\n", // line breaks around list entries: valid in a list key only
	"a\x00" + marker,
	`"` + marker + `"`,
	"{" + marker + "}",
	"a;" + marker,
	"#" + marker,
	"$" + marker + "$request_uri",
	"../../" + marker + "/../etc/passwd",
	"/" + marker + "/../../x",
	"\xff\xfe" + marker,
	"'" + marker + "`\\",
	"${" + marker + "}",
	"%0d%0a" + marker,
	marker + " " + marker,
	strings.Repeat(marker, 64<<10/len(marker)),
}

// companions are the keys that make another key take effect, so that the
// corpus reaches every key's Parse and rendering, not only its validator.
var companions = map[string]map[string]string{
	"cors-":                    {"enable-cors": "true"},
	"canary-":                  {"canary": "true", "canary-by-header": "X-Canary"},
	"session-cookie-":          {"affinity": "cookie"},
	"proxy-ssl-":               {"backend-protocol": "HTTPS", "proxy-ssl-secret": "backend-ca"},
	"auth-secret":              {"auth-type": "basic", "auth-secret": "users"},
	"auth-realm":               {"auth-type": "basic", "auth-secret": "users"},
	"auth-type":                {"auth-secret": "users"},
	"permanent-redirect-code":  {"permanent-redirect": "https://example.com/"},
	"temporal-redirect-code":   {"temporal-redirect": "https://example.com/"},
	"rewrite-target":           {"use-regex": "true"},
	"upstream-hash-by-subset":  {"upstream-hash-by": "$remote_addr"},
	"affinity-":                {"affinity": "cookie"},
	"x-forwarded-prefix":       {"rewrite-target": "/"},
	"canary-by-header-value":   {"canary": "true", "canary-by-header": "X-Canary"},
	"canary-by-header-pattern": {"canary": "true", "canary-by-header": "X-Canary"},
	"canary-weight-total":      {"canary": "true", "canary-weight": "10"},
}

// TestInjectionCorpus puts every hostile value in every key. Each value
// must be refused (a finding on the object names the key) or inert: the
// configuration stays valid without isolating the object (validators are at
// least as strict as ramjetd's), no control character, invalid UTF-8 or
// injected header reaches it, every file is named by its digest inside the
// file folder, and findings carry no raw value.
func TestInjectionCorpus(t *testing.T) {
	base := fixture(t)
	for _, key := range allKeys() {
		for i, value := range hostileValues {
			t.Run(fmt.Sprintf("%s/%d", key, i), func(t *testing.T) {
				annotations := withCompanions(key)
				annotations[registry.Prefix+key] = value
				out := translate(t, base, annotations)
				checkInert(t, out, key, value)
			})
		}
	}
}

// allKeys lists every key of every family (a wildcard key as one key under
// it).
func allKeys() []string {
	var keys []string
	for _, f := range registry.Families() {
		for _, k := range f.Keys {
			name := k.Name
			if k.Wildcard {
				name += "x"
			}
			keys = append(keys, name)
		}
	}
	slices.Sort(keys)
	return keys
}

func withCompanions(key string) map[string]string {
	out := map[string]string{}
	for prefix, extra := range companions {
		if strings.HasPrefix(key, prefix) {
			for k, v := range extra {
				out[registry.Prefix+k] = v
			}
		}
	}
	return out
}

// fileName is how generated files are named: a sha256 and an extension.
var fileName = regexp.MustCompile(`^[0-9a-f]{64}\.[a-z.]+$`)

func checkInert(t *testing.T, out *sources.Output, key, value string) {
	t.Helper()
	if err := out.Config.Validate(); err != nil {
		t.Fatalf("the configuration is invalid: %v", err)
	}
	refused, invalid := false, false
	for _, f := range out.Findings {
		if strings.Contains(f.Message, "left out because it makes the configuration invalid") {
			t.Errorf("the value reached the configuration and made it invalid (no validator caught it): %s", f.Message)
		}
		if strings.Contains(f.Message, key) {
			refused = true
			invalid = invalid || f.Reason == core.InvalidAnnotation
		}
		if len(f.Message) > core.MaxMessage || strings.ContainsAny(f.Message, "\r\n\x00") || !utf8.ValidString(f.Message) {
			t.Errorf("a finding holds a raw value: %q", f.Message)
		}
	}
	if len(value) > registry.MaxValueBytes && !refused {
		t.Errorf("a %d-byte value was not refused", len(value))
	}
	if f := registry.Owner(key); invalid && f.AccessControl && out.Objects[hostile] != core.Rejected {
		t.Errorf("an access-control value was invalid but the object is %s: it must not be served without the control", out.Objects[hostile])
	}
	for _, s := range configStrings(reflect.ValueOf(out.Config)) {
		if s.field == "Body" {
			continue // the fixed bodies Ramjet writes
		}
		if strings.ContainsAny(s.value, "\r\n\x00") || !utf8.ValidString(s.value) || strings.HasPrefix(s.value, "X-"+marker) {
			t.Errorf("%s = %q reached the configuration", s.field, s.value)
		}
		if strings.HasSuffix(s.field, "File") && s.value != "" &&
			(path.Dir(s.value) != "/run/ramjet" || !fileName.MatchString(path.Base(s.value))) {
			t.Errorf("%s = %q is not a generated file name", s.field, s.value)
		}
	}
	for name := range out.Files {
		if !fileName.MatchString(name) {
			t.Errorf("generated file %q is not named by its digest", name)
		}
	}
}

// leftOut reports whether isolation left an object out.
func leftOut(out *sources.Output) bool {
	return slices.ContainsFunc(out.Findings, func(f core.Finding) bool {
		return strings.Contains(f.Message, "left out because it makes the configuration invalid")
	})
}

type configString struct{ field, value string }

// configStrings collects every string of the configuration with the name
// of its field.
func configStrings(v reflect.Value) []configString {
	var out []configString
	var walk func(field string, v reflect.Value)
	walk = func(field string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(field, v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Type().Field(i).Name, v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(field, v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(field, k)
				walk(field, v.MapIndex(k))
			}
		case reflect.String:
			out = append(out, configString{field, v.String()})
		}
	}
	walk("Config", v)
	return out
}

// translate runs the controller's translation on the fixture plus one
// Ingress with the given annotations.
func translate(t testing.TB, base []any, annotations map[string]string) *sources.Output {
	return translateObjects(t, base, ingressWith(annotations))
}

func translateObjects(t testing.TB, base []any, ing *networkingv1.Ingress) *sources.Output {
	snap := snapshot.New()
	for _, obj := range base {
		snap.Add(obj)
	}
	snap.Add(ing)
	snap.Sort()
	sel, err := registry.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	opts := sources.Options{
		Inputs: []input.Input{&ingress.Input{Options: ingress.Options{IngressClass: ingress.DefaultIngressClass,
			ControllerClass: ingress.DefaultControllerClass, Annotations: sel}}},
		HTTPSListener: "https",
	}
	opts.Core.FileDir = "/run/ramjet"
	server := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}, "https": {Address: ":443", TLS: &config.ListenerTLS{}}}}
	return sources.Translate(snap, server, opts)
}

// hostile is the object the corpus's values are put in.
var hostile = core.Origin{Kind: "Ingress", Namespace: "shop", Name: "hostile"}

func ingressWith(annotations map[string]string) *networkingv1.Ingress {
	class := "ramjet"
	prefix := networkingv1.PathTypePrefix
	backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "hostile", Annotations: annotations},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "missing"}},
			Rules: []networkingv1.IngressRule{{Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: backend}, {Path: "/api", PathType: &prefix, Backend: backend}},
			}}}},
		},
	}
}

// fixture is the objects every case shares: the IngressClass, the Service
// with a ready endpoint, an htpasswd Secret and a CA Secret, and a main
// Ingress of the same paths (for canaries).
func fixture(t testing.TB) []any {
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	ready := true
	port := int32(80)
	main := ingressWith(nil)
	main.Name, main.CreationTimestamp = "main", metav1.Unix(0, 0)
	return []any{
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: networkingv1.IngressClassSpec{Controller: ingress.DefaultControllerClass}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Port: 80}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Port: &port}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "users"}, Data: map[string][]byte{"auth": append([]byte("alice:"), hash...)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "backend-ca"}, Data: map[string][]byte{"ca.crt": testCA(t)}},
		main,
	}
}

// FuzzTranslateIngress translates one Ingress whose annotation, path and
// host come from the fuzzer: translation never panics, always yields a valid
// configuration and is deterministic.
func FuzzTranslateIngress(f *testing.F) {
	keys := allKeys()
	for i := range keys {
		f.Add(uint(i), hostileValues[i%len(hostileValues)], "/", "shop.example.com")
		f.Add(uint(i), "true", "/api(/|$)(.*)", "*.example.com")
		f.Add(uint(i), "1", "/broken(", "shop.example.com")
		f.Add(uint(i), "location /admin { deny all; }\n# return 403;\n", "/api/user/register(/|$)(.*)", "127.0.0.1")
		f.Add(uint(i), "10.0.0.0/8,\n192.168.0.0/16\n", "/a\nb", "shop.example.com")
	}
	base := fixture(f)
	f.Fuzz(func(t *testing.T, keyIndex uint, value, path, host string) {
		key := keys[keyIndex%uint(len(keys))]
		annotations := withCompanions(key)
		annotations[registry.Prefix+key] = value
		ing := ingressWith(annotations)
		ing.Spec.Rules[0].Host = host
		ing.Spec.Rules[0].HTTP.Paths[1].Path = path
		first := translateObjects(t, base, ing)
		if err := first.Config.Validate(); err != nil {
			t.Fatalf("invalid configuration for %s=%q path %q host %q: %v", key, value, path, host, err)
		}
		if leftOut(first) {
			// A path may itself break the configuration (an invalid regex),
			// which isolation handles; the annotation must never be why.
			without := ingressWith(withCompanions(key))
			without.Spec.Rules = ing.Spec.Rules
			if !leftOut(translateObjects(t, base, without)) {
				t.Fatalf("%s=%q reached the configuration and made it invalid (no validator caught it)", key, value)
			}
		}
		again := translateObjects(t, base, ing)
		a, _ := yaml.Marshal(first.Config)
		b, _ := yaml.Marshal(again.Config)
		if string(a) != string(b) {
			t.Fatalf("translation is not deterministic for %s=%q", key, value)
		}
	})
}

// testCA is a PEM certificate for the CA Secret.
func testCA(t testing.TB) []byte {
	cert, err := certs.SelfSigned("backend-ca.internal", "backend-ca.internal")
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
}
