package ramjet_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/test/golden"
)

// schemaPath is the chart's values schema; its "server" part is generated
// from ramjetd's configuration types, so that what the chart accepts under
// server: is exactly what ramjetd reads.
const schemaPath = "values.schema.json"

// TestSchemaServer keeps values.schema.json's server part equal to the one
// generated from config.Server (rewritten by -update).
func TestSchemaServer(t *testing.T) {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	docs := fieldDocs(t, "../../dataplane/config")
	want := roundTrip(t, schemaOf(reflect.TypeFor[config.Server](), docs))
	props := schema["properties"].(map[string]any)
	if golden.Update() {
		props["server"] = want
		writeSchema(t, schema)
		return
	}
	if !reflect.DeepEqual(props["server"], want) {
		t.Errorf("%s: properties.server is not the schema of ramjetd's config.Server; run go test ./charts/ramjet -run TestSchemaServer -update", schemaPath)
	}
}

// TestSchemaAnnotationDefaults keeps the schema of
// ingressController.annotationDefaults to the keys --annotation-default
// takes (rewritten by -update).
func TestSchemaAnnotationDefaults(t *testing.T) {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	keys := slices.Sorted(slices.Values(ingress.ControllerDefaultKeys))
	want := roundTrip(t, map[string]any{
		"type":                 "object",
		"propertyNames":        map[string]any{"enum": keys},
		"additionalProperties": map[string]any{"type": "string"},
	})
	props := schema["properties"].(map[string]any)["ingressController"].(map[string]any)["properties"].(map[string]any)
	if golden.Update() {
		props["annotationDefaults"] = want
		writeSchema(t, schema)
		return
	}
	if !reflect.DeepEqual(props["annotationDefaults"], want) {
		t.Errorf("%s: properties.ingressController.properties.annotationDefaults does not list ingress.ControllerDefaultKeys; run go test ./charts/ramjet -run TestSchemaAnnotationDefaults -update", schemaPath)
	}
}

// writeSchema rewrites values.schema.json with schema.
func writeSchema(t *testing.T, schema map[string]any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(schema); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schemaPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// roundTrip returns v as encoding/json decodes it, for comparison with a
// decoded file.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// durationSchema and sizeSchema follow config.Duration's and
// config.ByteSize's decoders.
var (
	durationSchema = map[string]any{"oneOf": []any{
		map[string]any{"type": "integer", "const": 0},
		map[string]any{"type": "string", "pattern": `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`},
	}}
	sizeSchema = map[string]any{"oneOf": []any{
		map[string]any{"type": "integer", "minimum": 0},
		map[string]any{"type": "string", "pattern": `^[0-9]+(k|K|m|M|g|G|KiB|MiB|GiB)?$`},
	}}
)

// schemaOf is the JSON schema of a configuration type as ramjetd's strict
// YAML decoder reads it: structs refuse unknown keys.
func schemaOf(t reflect.Type, docs map[string]string) map[string]any {
	switch t {
	case reflect.TypeFor[config.Duration]():
		return durationSchema
	case reflect.TypeFor[config.ByteSize]():
		return sizeSchema
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), docs)
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), docs)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), docs)}
	case reflect.Struct:
		props := map[string]any{}
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			s := schemaOf(f.Type, docs)
			if doc := docs[t.Name()+"."+f.Name]; doc != "" {
				s = withDescription(s, doc)
			}
			props[name] = s
		}
		return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	}
	panic("schemaOf: no schema for " + t.String() + "; add its kind")
}

// withDescription returns a copy of s with a description.
func withDescription(s map[string]any, doc string) map[string]any {
	out := map[string]any{"description": doc}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// fieldDocs reads the doc comments of the struct fields of the Go package
// in dir, keyed "Type.Field", as one line each.
func fieldDocs(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, field := range st.Fields.List {
				for _, name := range field.Names {
					docs[spec.Name.Name+"."+name.Name] = strings.Join(strings.Fields(field.Doc.Text()), " ")
				}
			}
			return false
		})
	}
	return docs
}
