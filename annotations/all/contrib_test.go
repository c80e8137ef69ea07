package all_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/test/golden"
)

// The contributor checks, in the spirit of CoreDNS's: what a new family
// must have is checked here rather than remembered in review.

const modulePath = "github.com/ramjet-dev/ramjet/annotations/"

// TestEveryFamilyIsImported fails when a folder under annotations/ is not
// blank-imported by all.go, which would leave its family out of the
// controller.
func TestEveryFamilyIsImported(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "all.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var imported []string
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		imported = append(imported, strings.TrimPrefix(path, modulePath))
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "all" && !slices.Contains(imported, e.Name()) {
			t.Errorf("annotations/%s is not imported by annotations/all/all.go", e.Name())
		}
	}
}

// TestFamiliesAreIndependent fails when a family imports another family or
// an input (ARCHITECTURE.md: a family depends on registry and core only,
// and reads the keys it depends on through registry.Context.Value).
func TestFamiliesAreIndependent(t *testing.T) {
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "../all/") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, modulePath) || strings.HasPrefix(p, "github.com/ramjet-dev/ramjet/sources") {
				t.Errorf("%s imports %s: a family depends on registry and core only", strings.TrimPrefix(path, "../"), p)
			}
		}
	}
}

// TestEveryKeyIsDescribed checks what docs, validation and the registry's
// users rely on: every family and key has a doc, a risk, a scope and a
// validator (keys Ramjet ignores say what happens instead).
func TestEveryKeyIsDescribed(t *testing.T) {
	risks := []registry.Risk{registry.RiskLow, registry.RiskMedium, registry.RiskHigh, registry.RiskCritical}
	scopes := []registry.Scope{registry.ScopeIngress, registry.ScopeHost, registry.ScopeBackend}
	for _, f := range registry.Families() {
		if f.Doc == "" {
			t.Errorf("family %s has no Doc", f.Name)
		}
		for _, k := range f.Keys {
			where := f.Name + "/" + k.Name
			switch {
			case k.Ignored != "":
				if k.Differs != "" {
					t.Errorf("%s: an ignored key says what happens instead in Ignored, not Differs", where)
				}
			case k.Doc == "":
				t.Errorf("%s has no Doc", where)
			case k.Validate == nil:
				t.Errorf("%s has no validator (registry.Any when any value will do)", where)
			}
			if !slices.Contains(risks, k.Risk) {
				t.Errorf("%s: risk %q is not one of %v", where, k.Risk, risks)
			}
			if !slices.Contains(scopes, k.Scope) {
				t.Errorf("%s: scope %q is not one of %v", where, k.Scope, scopes)
			}
		}
	}
}

// TestEveryFamilyHasGoldenCases checks that each family's folder holds its
// own golden cases and runs them.
func TestEveryFamilyHasGoldenCases(t *testing.T) {
	folders := map[string]string{}
	for _, f := range registry.Families() {
		dir := f.Dir()
		if other, ok := folders[dir]; ok {
			t.Errorf("families %s and %s share the folder %s; one family per package", other, f.Name, dir)
		}
		folders[dir] = f.Name
		cases, _ := filepath.Glob(filepath.Join(dir, "testdata", "*.txtar"))
		if len(cases) == 0 {
			t.Errorf("family %s has no golden cases in %s/testdata", f.Name, filepath.Base(dir))
		}
		runner, err := os.ReadFile(filepath.Join(dir, "golden_test.go"))
		if err != nil || !strings.Contains(string(runner), "golden.Run(t)") {
			t.Errorf("family %s: %s/golden_test.go does not run the golden cases (golden.Run(t))", f.Name, filepath.Base(dir))
		}
	}
}

// TestDocs keeps docs/annotations.md equal to what the registry generates
// (go test ./annotations/all -run TestDocs -update rewrites it).
func TestDocs(t *testing.T) {
	const path = "../../docs/annotations.md"
	want := registry.Markdown()
	if golden.Update() {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(want) {
		t.Errorf("docs/annotations.md is stale: run go test ./annotations/all -run TestDocs -update (%v)", err)
	}
}
