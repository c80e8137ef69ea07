package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/hashicorp/go-multierror"
	"gopkg.in/yaml.v3"
)

// MaxFileBytes bounds the size of a configuration file.
const MaxFileBytes = 64 << 20

// ReadFile reads and decodes a configuration file. It does not validate.
func ReadFile(path string) (*Config, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFileBytes)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, nil, prefixEach(path, err)
	}
	return cfg, data, nil
}

// Decode parses ramjet.yaml strictly: unknown keys, wrong types, duplicate
// keys and a second document are errors that name the line. A file in JSON
// form (JSON is YAML; ramjet-ingress writes that form) is read by a strict
// JSON decoder first, several times faster on large files.
func Decode(data []byte) (*Config, error) {
	if cfg, ok := decodeJSON(data); ok {
		return cfg, nil
	}
	return decodeYAML(data)
}

// decodeYAML is Decode's YAML decoder, which words every error.
func decodeYAML(data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var cfg Config
	if err := dec.Decode(&cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the configuration is empty")
		}
		return nil, readableYAMLError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("line %d: a second YAML document; the configuration is one document", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, readableYAMLError(err)
	}
	return &cfg, nil
}

var (
	unknownField = regexp.MustCompile(`^(line \d+): field (\S+) not found in type config\.(\w+)$`)
	wrongType    = regexp.MustCompile("^(line \\d+): cannot unmarshal !!(\\w+) `(.*)` into (.+)$")
	wrongKind    = regexp.MustCompile(`^(line \d+): cannot unmarshal !!(\w+) into (.+)$`)
)

var yamlKinds = map[string]string{
	"str": "a string", "int": "a number", "float": "a number", "bool": "a boolean",
	"map": "a mapping", "seq": "a list", "null": "nothing", "timestamp": "a timestamp",
}

// stringTypes are the configuration's named string types.
var stringTypes = map[string]bool{
	"config.Scheme": true, "config.MembersFrom": true, "config.Balance": true, "config.HashBy": true,
}

// goKind names Go target types the way a configuration author thinks of
// them.
func goKind(t string) string {
	switch {
	case stringTypes[t]:
		return "a string"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "config."):
		return "a mapping"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number (" + t + ")"
	case t == "bool":
		return "a boolean (true or false)"
	case t == "string":
		return "a string"
	}
	return t
}

// readableYAMLError rewrites yaml.v3's messages ("field x not found in type
// config.Pool") into ones that speak of the file, keeping the line numbers,
// and joins several into one error listing each.
func readableYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return syntaxError(err)
	}
	var all *multierror.Error
	for _, msg := range te.Errors {
		all = multierror.Append(all, errors.New(rewriteYAMLMessage(msg)))
	}
	all.ErrorFormat = ListFormat
	return all
}

func rewriteYAMLMessage(msg string) string {
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s: unknown field %q in %s", m[1], m[2], strings.ToLower(m[3]))
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		if m[2] == "int" && strings.HasPrefix(m[3], "-") && strings.HasPrefix(m[4], "uint") {
			return fmt.Sprintf("%s: %q is below 0, want a number 0 or more", m[1], m[3])
		}
		return fmt.Sprintf("%s: %q is %s, want %s", m[1], m[3], yamlKinds[m[2]], goKind(m[4]))
	}
	if m := wrongKind.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s: found %s, want %s", m[1], yamlKinds[m[2]], goKind(m[3]))
	}
	return msg
}

// syntaxError words a YAML syntax error. yaml.v3 leaves the line out of
// errors on the first line (it counts lines from 0 there); those get it back.
func syntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	switch {
	case strings.HasPrefix(msg, "line "):
		return errors.New(msg)
	case strings.Contains(msg, "control characters"):
		return errors.New("the file holds control characters, which YAML does not allow")
	}
	return errors.New("line 1: " + msg)
}

// prefixEach puts "path: " before each of the errors err lists.
func prefixEach(path string, err error) error {
	var all *multierror.Error
	for _, e := range Errors(err) {
		all = multierror.Append(all, fmt.Errorf("%s: %w", path, e))
	}
	all.ErrorFormat = ListFormat
	return all
}

// ListFormat formats a list of errors one per line, as ramjetd validate
// and the admin API show them.
func ListFormat(errs []error) string {
	lines := make([]string, len(errs))
	for i, err := range errs {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}
