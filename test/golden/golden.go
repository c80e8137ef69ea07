// Package golden runs the translation's golden cases: each
// testdata/<case>.txtar of the calling package holds input objects, flags and
// the expected ramjet.yaml and findings. The sources package and every
// annotation family keep their cases next to their code and call Run.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/annotations/customheaders"
	"github.com/ramjet-dev/ramjet/annotations/extauth"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/offline"
)

var update = flag.Bool("update", false, "rewrite the expected output of golden tests (testdata/*.txtar, generated docs)")

// Update reports whether the test run was asked to rewrite expected output
// (-update): the one flag every golden test of the project uses.
func Update() bool { return *update }

// Run translates each testdata/<case>.txtar of the calling package's folder
// and compares the result with the case's expected sections:
//
//	-- flags --       translation flags, one per line (optional)
//	-- input.yaml --  the objects (IngressClasses, Ingresses, Services,
//	                  EndpointSlices, Secrets)
//	-- ramjet.yaml -- the rendered tenant (expected)
//	-- findings --    the input's warnings, one line per finding: Kind
//	                  ns/name Reason: message (expected), then the state
//	                  of every object
//
// Run with -update to regenerate the expected sections and review the diff.
func Run(t *testing.T) {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			archive := ReadArchive(t, path)
			got := translateCase(t, archive)
			if *update {
				archive.Set("ramjet.yaml", got["ramjet.yaml"])
				archive.Set("findings", got["findings"])
				if err := os.WriteFile(path, archive.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, section := range []string{"ramjet.yaml", "findings"} {
				if want := archive.Get(section); want != got[section] {
					t.Errorf("section %s differs (run with -update and review the diff):\n--- got\n%s\n--- want\n%s", section, got[section], want)
				}
			}
		})
	}
}

// translateCase runs the translation of a case and renders the sections.
func translateCase(t *testing.T, a *Archive) map[string]string {
	snap, notes, err := offline.Read([]string{"-"}, strings.NewReader(a.Get("input.yaml")))
	if err != nil {
		t.Fatalf("reading input.yaml: %v", err)
	}
	base := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}, "https": {Address: ":443", TLS: &config.ListenerTLS{}}}}
	opts := caseOptions(t, a.Get("flags"), base)
	out := sources.Translate(snap, base, opts)
	if err := out.Config.Validate(); err != nil {
		t.Fatalf("the translation is not valid: %v", err)
	}
	var tenant bytes.Buffer
	enc := yaml.NewEncoder(&tenant)
	enc.SetIndent(2)
	if err := enc.Encode(out.Config.Tenants[core.TenantName]); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"ramjet.yaml": tenant.String(), "findings": FindingLines(out, notes)}
}

// FindingLines renders the findings section: the input's notes (an
// object that does not decode is left out, and a case must show it), every
// finding, the state of every object, then the problems of the flags.
func FindingLines(out *sources.Output, notes offline.Notes) string {
	var b strings.Builder
	for _, w := range notes.Warnings {
		fmt.Fprintf(&b, "input: %s\n", w)
	}
	for _, u := range notes.Unreadable {
		fmt.Fprintf(&b, "input unreadable: %s\n", u)
	}
	for _, f := range out.Findings {
		fmt.Fprintf(&b, "%s %s/%s %s: %s\n", f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Reason, f.Message)
	}
	var states []string
	for o, s := range out.Objects {
		states = append(states, fmt.Sprintf("%s %s/%s is %s\n", o.Kind, o.Namespace, o.Name, s))
	}
	slices.Sort(states)
	for _, s := range states {
		b.WriteString(s)
	}
	for _, p := range out.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	for _, ig := range out.Ignored {
		fmt.Fprintf(&b, "ignored: %s: %s\n", ig.Object, ig.Reason)
	}
	return b.String()
}

// caseOptions parses a case's flags as ramjet-ingress would; a memcached
// host goes into base.
func caseOptions(t *testing.T, flags string, base *config.Server) sources.Options {
	fs := pflag.NewFlagSet("case", pflag.ContinueOnError)
	annotations := fs.String("annotations", "all", "")
	crossNS := fs.Bool("cross-namespace-paths", false, "")
	withoutClass := fs.Bool("watch-ingress-without-class", false, "")
	externalName := fs.Bool("allow-external-name-services", false, "")
	defaultBackend := fs.String("default-backend", "", "")
	defaultCert := fs.String("default-ssl-certificate", "", "")
	ingressClass := fs.String("ingress-class", ingress.DefaultIngressClass, "")
	backendTLSVerify := fs.String("backend-tls-verify", string(ingress.VerifyAlways), "")
	globalAuthURL := fs.String("global-auth-url", "", "")
	limitStatus := fs.Int("limit-status-code", ingress.DefaultLimitStatus, "")
	sslPassthrough := fs.Bool("enable-ssl-passthrough", false, "")
	annotationDefaults := fs.StringArray("annotation-default", nil, "")
	allowedHeaders := fs.String("global-allowed-response-headers", "", "")
	memcachedHost := fs.String("global-rate-limit-memcached-host", "", "")
	globalStatus := fs.Int("global-rate-limit-status-code", ingress.DefaultGlobalRateLimitStatus, "")
	if err := fs.Parse(strings.Fields(flags)); err != nil {
		t.Fatalf("flags: %v", err)
	}
	sel, err := registry.Select(*annotations)
	if err != nil {
		t.Fatal(err)
	}
	verify, err := ingress.ParseBackendTLSVerify(*backendTLSVerify)
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := ingress.ParseAnnotationDefaults(*annotationDefaults, sel)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := customheaders.ParseAllowed(*allowedHeaders)
	if err != nil {
		t.Fatal(err)
	}
	var global *config.ExternalAuth
	if *globalAuthURL != "" {
		if global, err = extauth.Global(*globalAuthURL); err != nil {
			t.Fatal(err)
		}
	}
	if *memcachedHost != "" {
		base.Memcached = &config.Memcached{Addresses: []string{*memcachedHost + ":11211"}}
	}
	opts := sources.Options{
		Inputs: []input.Input{&ingress.Input{Options: ingress.Options{
			IngressClass: *ingressClass, ControllerClass: ingress.DefaultControllerClass,
			WatchWithoutClass: *withoutClass, AllowExternalName: *externalName, Annotations: sel,
			BackendTLSVerify: verify, GlobalAuth: global, LimitStatus: *limitStatus, SSLPassthrough: *sslPassthrough,
			AnnotationDefaults:     defaults,
			AllowedResponseHeaders: allowed,
			GlobalRateLimit:        base.Memcached != nil, GlobalRateLimitStatus: *globalStatus,
		}}},
		DefaultBackend: *defaultBackend, DefaultSSLCertificate: *defaultCert, HTTPSListener: "https",
		AllowExternalName: *externalName,
	}
	opts.Core.CrossNamespacePaths = *crossNS
	opts.Core.FileDir = "/etc/ramjet/generated"
	return opts
}

// Archive is a golden case's txtar file: a comment, then "-- name --"
// sections. The Gateway API's status goldens read theirs with it too.
type Archive struct {
	comment  string
	names    []string
	sections map[string]string
}

// ReadArchive reads the txtar file at path.
func ReadArchive(t *testing.T, path string) *Archive {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := &Archive{sections: map[string]string{}}
	current := ""
	var body strings.Builder
	flush := func() {
		if current == "" {
			a.comment = body.String()
		} else {
			a.sections[current] = body.String()
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if name, ok := sectionName(line); ok {
			flush()
			current = name
			a.names = append(a.names, name)
			continue
		}
		body.WriteString(line)
	}
	flush()
	return a
}

func sectionName(line string) (string, bool) {
	line = strings.TrimRight(line, "\n")
	if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") && len(line) > 6 {
		return line[3 : len(line)-3], true
	}
	return "", false
}

// Get returns a section, "" when there is none.
func (a *Archive) Get(name string) string { return a.sections[name] }

// Set replaces a section, adding it at the end when there is none.
func (a *Archive) Set(name, content string) {
	if _, ok := a.sections[name]; !ok {
		a.names = append(a.names, name)
	}
	a.sections[name] = content
}

// Bytes is the archive as a file.
func (a *Archive) Bytes() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, name := range a.names {
		fmt.Fprintf(&b, "-- %s --\n", name)
		b.WriteString(a.sections[name])
	}
	return b.Bytes()
}

// RunCases runs each txtar file matching pattern as a subtest: render
// gives the sections it computes from the case, which -update writes into
// the file and a plain run compares with the file's.
func RunCases(t *testing.T, pattern string, render func(t *testing.T, a *Archive) map[string]string) {
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases %s: %v", pattern, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			a := ReadArchive(t, path)
			got := render(t, a)
			names := slices.Sorted(maps.Keys(got))
			if Update() {
				for _, name := range names {
					a.Set(name, got[name])
				}
				if err := os.WriteFile(path, a.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range names {
				if want := a.Get(name); got[name] != want {
					t.Errorf("%s differs (run with -update and review the diff):\n--- got\n%s\n--- want\n%s", name, got[name], want)
				}
			}
		})
	}
}
