package ramjet_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ramjet-dev/ramjet/test/golden"
)

// The README's values table lies between these markers and is generated
// from the "# --" comments of values.yaml.
const (
	readmePath   = "README.md"
	tableBegin   = "<!-- values table: generated from values.yaml by go test -run TestReadmeValues -update -->"
	tableEnd     = "<!-- end of values table -->"
	commentStart = "# --"
)

// value is one documented value of values.yaml.
type value struct {
	path, def, doc string
}

// TestReadmeValues keeps README.md's values table equal to the one
// generated from values.yaml (rewritten by -update), and fails on a value
// that has no "# --" comment.
func TestReadmeValues(t *testing.T) {
	values := documentedValues(t)
	table := valuesTable(values)
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	before, rest, ok1 := strings.Cut(readme, tableBegin)
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q", readmePath, tableBegin, tableEnd)
	}
	want := before + tableBegin + "\n" + table + tableEnd + after
	if golden.Update() {
		if err := os.WriteFile(readmePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme != want {
		t.Errorf("%s's values table is not the one values.yaml gives; run go test ./charts/ramjet -run TestReadmeValues -update", readmePath)
	}
	t.Logf("values table: %d values", len(values))
}

// documentedValues walks values.yaml: a key with a "# --" comment is one
// value (its children, if any, are part of its default); a key without one
// must be a map whose keys are documented.
func documentedValues(t *testing.T) []value {
	t.Helper()
	data, err := os.ReadFile("values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	var out []value
	var walk func(prefix string, m *yaml.Node)
	walk = func(prefix string, m *yaml.Node) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			key, val := m.Content[i], m.Content[i+1]
			path := prefix + key.Value
			if text, ok := valueDoc(key.HeadComment); ok {
				out = append(out, value{path: path, def: defaultOf(t, val), doc: text})
				continue
			}
			if val.Kind != yaml.MappingNode || len(val.Content) == 0 {
				t.Errorf("values.yaml: %s has no %q comment", path, commentStart)
				continue
			}
			walk(path+".", val)
		}
	}
	walk("", doc.Content[0])
	return out
}

// valueDoc returns the text of the last "# --" paragraph of a comment.
func valueDoc(comment string) (string, bool) {
	i := strings.LastIndex(comment, commentStart)
	if i < 0 {
		return "", false
	}
	var words []string
	for _, line := range strings.Split(comment[i+len(commentStart):], "\n") {
		words = append(words, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#")))
	}
	return strings.TrimSpace(strings.Join(words, " ")), true
}

// defaultOf writes a default compactly: scalars as YAML gives them, maps
// and lists as JSON.
func defaultOf(t *testing.T, n *yaml.Node) string {
	t.Helper()
	if n.Kind == yaml.ScalarNode {
		if n.Value == "" {
			return `""`
		}
		return n.Value
	}
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// valuesTable is the markdown table of the values.
func valuesTable(values []value) string {
	var b strings.Builder
	b.WriteString("| Value | Default | Meaning |\n|---|---|---|\n")
	for _, v := range values {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", v.path, strings.ReplaceAll(v.def, "|", `\|`), strings.ReplaceAll(v.doc, "|", `\|`))
	}
	return b.String()
}
