package offline

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ramjet-dev/ramjet/core"
)

// readKinds are the kinds translation reads: an object of one of them that
// does not decode makes its document unreadable.
var readKinds = map[string]bool{"Ingress": true, "IngressClass": true, "Service": true, "EndpointSlice": true, "Secret": true, "ConfigMap": true,
	"Namespace": true, "GatewayClass": true, "Gateway": true, "HTTPRoute": true, "GRPCRoute": true, "ReferenceGrant": true, "BackendTLSPolicy": true}

// objectName names an object as far as it is known: its kind, and its
// namespace and name when the document has them.
func objectName(u *unstructured.Unstructured) string {
	kind := quoteUnusual(u.GetKind())
	switch {
	case u.GetName() == "":
		return kind + " (without a name)"
	case u.GetNamespace() != "":
		return kind + " " + quoteUnusual(u.GetNamespace()) + "/" + quoteUnusual(u.GetName())
	}
	return kind + " " + quoteUnusual(u.GetName())
}

// quoteUnusual returns s as it is when it could be a Kubernetes name or
// kind (letters, digits, '-', '.'), else quoted: a document that does not
// decode may carry any bytes in its names, and a report must not print
// them raw.
func quoteUnusual(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return strconv.Quote(s)
		}
	}
	return s
}

// decodeProblem says why an object does not decode, naming the field as
// written (with its list indexes and map key) when the error is a value of
// the wrong type, as a number written for a string.
func decodeProblem(u *unstructured.Unstructured, err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return err.Error()
	}
	got, _, _ := strings.Cut(te.Value, " ") // "number 3600" → "number"
	path := fieldPath(te.Field)
	field := strings.Join(path, ".")
	if found, ok := locate(u.Object, path, got); ok {
		field = strings.TrimPrefix(found, ".")
	}
	msg := fmt.Sprintf("%s: %s, where Kubernetes wants %s", field, article(got), kindPhrase(te.Type.Kind()))
	if te.Type.Kind() == reflect.String && got != "object" && got != "array" {
		msg += " (quote the value)"
	}
	return msg
}

// fieldPath splits the field path of a type error, leaving out the names
// of embedded Go structs ("spec.rules.IngressRuleValue.http" is
// spec.rules.http in the document).
func fieldPath(field string) []string {
	var out []string
	for seg := range strings.SplitSeq(field, ".") {
		if seg != "" && !unicode.IsUpper(rune(seg[0])) {
			out = append(out, seg)
		}
	}
	return out
}

// locate finds the first value of the document at path (through lists)
// whose JSON type is got, and returns its name after the path's start:
// .spec.rules[0].http.paths[1].backend.service.port.number, or
// .metadata.annotations["key"] for a map of strings holding one.
func locate(v any, path []string, got string) (string, bool) {
	if len(path) == 0 && jsonType(v) == got {
		return "", true
	}
	if items, ok := v.([]any); ok {
		for i, item := range items {
			if rest, ok := locate(item, path, got); ok {
				return fmt.Sprintf("[%d]", i) + rest, true
			}
		}
		return "", false
	}
	m, ok := v.(map[string]any)
	switch {
	case !ok:
		return "", false
	case len(path) == 0:
		key := mapEntry(m, got)
		return key, key != ""
	}
	child, ok := m[path[0]]
	if !ok {
		return "", false
	}
	rest, ok := locate(child, path[1:], got)
	return "." + path[0] + rest, ok
}

// mapEntry names the first key (in order) of a map whose value has the
// JSON type got, as ["key"]; "" when there is none.
func mapEntry(m map[string]any, got string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if jsonType(m[k]) == got {
			return "[" + core.Quote(k) + "]"
		}
	}
	return ""
}

// jsonType is the JSON type of a decoded value, as json.UnmarshalTypeError
// names it.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return "number"
}

func article(jsonType string) string {
	switch jsonType {
	case "array", "object":
		return "an " + jsonType
	case "bool":
		return "a boolean"
	}
	return "a " + jsonType
}

func kindPhrase(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return k.String()
}
