package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written as a Go duration string ("10s",
// "1m30s") or the number 0.
type Duration time.Duration

// Std returns the value as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Or returns d, or def when d is zero.
func (d Duration) Or(def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return time.Duration(d)
}

// String formats the duration as Go does.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML reads a duration string.
func (d *Duration) UnmarshalYAML(node *yaml.Node) error {
	v, err := parseDuration(node.Value)
	if err != nil || node.Kind != yaml.ScalarNode {
		return typeError(node.Line, "%q is not a duration (write it like 10s, 1m30s or 500ms)", node.Value)
	}
	*d = v
	return nil
}

// MarshalYAML writes the duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s is not a duration string", b)
	}
	v, err := parseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration", s)
	}
	*d = v
	return nil
}

func parseDuration(s string) (Duration, error) {
	if s == "0" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("negative duration")
	}
	return Duration(v), nil
}

// ByteSize is a number of bytes written as an integer or with a unit: k, m,
// g (as nginx) or KiB, MiB, GiB, all powers of 1024.
type ByteSize int64

// Or returns b, or def when b is zero.
func (b ByteSize) Or(def int64) int64 {
	if b == 0 {
		return def
	}
	return int64(b)
}

// UnmarshalYAML reads a size.
func (b *ByteSize) UnmarshalYAML(node *yaml.Node) error {
	v, err := ParseByteSize(node.Value)
	if err != nil || node.Kind != yaml.ScalarNode {
		return typeError(node.Line, "%q is not a size (write it like 65536, 64k or 10MiB)", node.Value)
	}
	*b = v
	return nil
}

// UnmarshalJSON reads a size given as a number or a string.
func (b *ByteSize) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	s := strings.Trim(string(data), `"`)
	v, err := ParseByteSize(s)
	if err != nil {
		return fmt.Errorf("%s is not a size", data)
	}
	*b = v
	return nil
}

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"k", 1 << 10}, {"K", 1 << 10}, {"m", 1 << 20}, {"M", 1 << 20}, {"g", 1 << 30}, {"G", 1 << 30},
}

// ParseByteSize parses "1024", "64k", "10m", "1g", "64KiB", "10MiB".
func ParseByteSize(s string) (ByteSize, error) {
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, factor = strings.TrimSuffix(s, u.suffix), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size")
	}
	if n > (1<<62)/factor {
		return 0, fmt.Errorf("size too large")
	}
	return ByteSize(n * factor), nil
}

// UnmarshalYAML reads a member written as a mapping or as its address.
// Problems are reported as yaml type errors, so decoding goes on and the
// file's other problems are reported too.
func (m *Member) UnmarshalYAML(node *yaml.Node) error {
	switch node.Kind {
	case yaml.ScalarNode:
		m.Address = node.Value
		return nil
	case yaml.MappingNode:
	default:
		return typeError(node.Line, "a member is an address or a mapping with address and weight")
	}
	var problems []string
	seen := map[string]int{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		if first, dup := seen[key.Value]; dup {
			problems = append(problems, fmt.Sprintf("line %d: mapping key %q already defined at line %d", key.Line, key.Value, first))
			continue
		}
		seen[key.Value] = key.Line
		var err error
		switch key.Value {
		case "address":
			err = value.Decode(&m.Address)
		case "weight":
			err = value.Decode(&m.Weight)
		default:
			problems = append(problems, fmt.Sprintf("line %d: field %s not found in type config.Member", key.Line, key.Value))
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			problems = append(problems, te.Errors...)
		} else if err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return &yaml.TypeError{Errors: problems}
	}
	return nil
}

// typeError reports one problem the way yaml.v3 reports type errors.
func typeError(line int, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)}}
}
