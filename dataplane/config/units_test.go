package config_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"gopkg.in/yaml.v3"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want config.ByteSize
		err  string // "" means no error
	}{
		{"0", 0, ""},
		{"1024", 1024, ""},
		{"+5", 5, ""},
		{"64k", 64 << 10, ""},
		{"64K", 64 << 10, ""},
		{"64KiB", 64 << 10, ""},
		{"10m", 10 << 20, ""},
		{"10M", 10 << 20, ""},
		{"10MiB", 10 << 20, ""},
		{"1g", 1 << 30, ""},
		{"1G", 1 << 30, ""},
		{"2GiB", 2 << 30, ""},
		{"0k", 0, ""},
		{"4611686018427387904", 1 << 62, ""},
		{"4294967296G", 1 << 62, ""},
		{"4194304GiB", 1 << 52, ""},
		{"4611686018427387905", 0, "size too large"},
		{"4294967297G", 0, "size too large"},
		{"4503599627370497m", 0, "size too large"},
		{"9223372036854775807", 0, "size too large"},
		{"9223372036854775808", 0, "not a size"},
		{"99999999999999999999k", 0, "not a size"},
		{"", 0, "not a size"},
		{"k", 0, "not a size"},
		{"ten", 0, "not a size"},
		{"-1", 0, "not a size"},
		{"-1k", 0, "not a size"},
		{"1.5k", 0, "not a size"},
		{"10KB", 0, "not a size"},
		{"10kb", 0, "not a size"},
		{"10 k", 0, "not a size"},
		{" 10", 0, "not a size"},
		{"1T", 0, "not a size"},
		{"1kk", 0, "not a size"},
		{"0x10", 0, "not a size"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := config.ParseByteSize(tc.in)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Errorf("ParseByteSize(%q): got %d, %v; want %d, nil", tc.in, got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseByteSize(%q): got %d, %v; want an error %q", tc.in, got, err, tc.err)
			}
		})
	}
}

func TestDurationYAML(t *testing.T) {
	tests := []struct {
		yaml string
		want time.Duration
		err  bool
	}{
		{"d: 0", 0, false},
		{"d: 0s", 0, false},
		{"d: 500ms", 500 * time.Millisecond, false},
		{"d: 1m30s", 90 * time.Second, false},
		{`d: "24h"`, 24 * time.Hour, false},
		{"d: 1.5h", 90 * time.Minute, false},
		{"d:", 0, false},
		{"d: ~", 0, false},
		{"d: -1s", 0, true},
		{"d: 10", 0, true},
		{"d: 1d", 0, true},
		{"d: 10 seconds", 0, true},
		{"d: [1s]", 0, true},
		{"d: {s: 1}", 0, true},
		{"d: true", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.yaml, func(t *testing.T) {
			var v struct {
				D config.Duration `yaml:"d"`
			}
			err := yaml.Unmarshal([]byte(tc.yaml), &v)
			switch {
			case tc.err && (err == nil || !strings.Contains(err.Error(), "is not a duration")):
				t.Errorf("yaml %q: got %v, %v; want a 'not a duration' error", tc.yaml, v.D, err)
			case !tc.err && (err != nil || v.D.Std() != tc.want):
				t.Errorf("yaml %q: got %v, %v; want %v, nil", tc.yaml, v.D, err, tc.want)
			}
		})
	}
}

func TestByteSizeYAML(t *testing.T) {
	tests := []struct {
		yaml string
		want config.ByteSize
		err  bool
	}{
		{"b: 65536", 65536, false},
		{"b: 64k", 64 << 10, false},
		{`b: "10MiB"`, 10 << 20, false},
		{"b: 0", 0, false},
		{"b:", 0, false},
		{"b: ten", 0, true},
		{"b: -1", 0, true},
		{"b: 1.5", 0, true},
		{"b: [64k]", 0, true},
		{"b: {a: 1}", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.yaml, func(t *testing.T) {
			var v struct {
				B config.ByteSize `yaml:"b"`
			}
			err := yaml.Unmarshal([]byte(tc.yaml), &v)
			switch {
			case tc.err && (err == nil || !strings.Contains(err.Error(), "is not a size")):
				t.Errorf("yaml %q: got %d, %v; want a 'not a size' error", tc.yaml, v.B, err)
			case !tc.err && (err != nil || v.B != tc.want):
				t.Errorf("yaml %q: got %d, %v; want %d, nil", tc.yaml, v.B, err, tc.want)
			}
		})
	}
}

func TestMemberYAML(t *testing.T) {
	tests := []struct {
		yaml string
		want []config.Member
		err  string // "" means no error
	}{
		{"[10.0.0.1:80]", []config.Member{{Address: "10.0.0.1:80"}}, ""},
		{`["[::1]:80", backend:8080]`, []config.Member{{Address: "[::1]:80"}, {Address: "backend:8080"}}, ""},
		{"[{address: 10.0.0.1:80, weight: 5}]", []config.Member{{Address: "10.0.0.1:80", Weight: 5}}, ""},
		{"[{weight: 5, address: a:1}, b:2]", []config.Member{{Address: "a:1", Weight: 5}, {Address: "b:2"}}, ""},
		{"[{address: a:1}]", []config.Member{{Address: "a:1"}}, ""},
		// yaml.v3 leaves a null out of a list of structs.
		{"[~, a:1]", []config.Member{{Address: "a:1"}}, ""},
		{"[[a, 1]]", nil, "a member is an address or a mapping"},
		{"[{address: a:1, weight: -1}]", nil, "cannot unmarshal"},
		{"[{address: a:1, weight: many}]", nil, "cannot unmarshal"},
		{"[{address: [a]}]", nil, "cannot unmarshal"},
		{"[{addr: a:1}]", nil, "addr"},
	}
	for _, tc := range tests {
		t.Run(tc.yaml, func(t *testing.T) {
			var got []config.Member
			err := yaml.Unmarshal([]byte(tc.yaml), &got)
			if tc.err == "" {
				if err != nil || !equal(got, tc.want) {
					t.Errorf("yaml %s: got %+v, %v; want %+v, nil", tc.yaml, got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("yaml %s: got %+v, %v; want an error with %q", tc.yaml, got, err, tc.err)
			}
		})
	}
}

func TestUnitHelpers(t *testing.T) {
	d := config.Duration(1500 * time.Millisecond)
	checks := []struct {
		name      string
		got, want any
	}{
		{"Duration.Std", d.Std(), 1500 * time.Millisecond},
		{"Duration.String", d.String(), "1.5s"},
		{"Duration.Or set", d.Or(time.Minute), 1500 * time.Millisecond},
		{"Duration.Or zero", config.Duration(0).Or(time.Minute), time.Minute},
		{"ByteSize.Or set", config.ByteSize(10).Or(99), int64(10)},
		{"ByteSize.Or zero", config.ByteSize(0).Or(99), int64(99)},
		{"Scheme.UsesTLS", []bool{config.SchemeHTTP.UsesTLS(), config.SchemeHTTPS.UsesTLS(), config.SchemeH2C.UsesTLS(), config.SchemeH2.UsesTLS(), config.Scheme("").UsesTLS()},
			[]bool{false, true, false, true, false}},
		{"Scheme.IsHTTP2", []bool{config.SchemeHTTP.IsHTTP2(), config.SchemeHTTPS.IsHTTP2(), config.SchemeH2C.IsHTTP2(), config.SchemeH2.IsHTTP2()},
			[]bool{false, false, true, true}},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !equal(c.got, c.want) {
				t.Errorf("got %#v, want %#v", c.got, c.want)
			}
		})
	}
	t.Run("Duration.MarshalYAML", func(t *testing.T) {
		out, err := yaml.Marshal(struct {
			D config.Duration `yaml:"d"`
		}{config.Duration(90 * time.Second)})
		if err != nil || string(out) != "d: 1m30s\n" {
			t.Errorf("yaml.Marshal: got %q, %v; want %q", out, err, "d: 1m30s\n")
		}
	})
}

// TestJSONRoundTrip marshals the full configuration to JSON (as the admin
// API and the controller do) and back, and checks nothing is lost.
func TestJSONRoundTrip(t *testing.T) {
	cfg := mustDecode(t, "full.yaml")
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	for _, want := range []string{
		`"read_header_timeout":"15s"`,
		`"idle_timeout":"1m30s"`,
		`"max_header_bytes":65536`,
		`"max_request_body_bytes":10485760`,
		`"max_age":"24h0m0s"`,
		`"retries":0`,
		`"connect_timeout":"2s"`,
		`"members":[{"address":"10.0.1.1:8080"},{"address":"10.0.1.2:8080","weight":3},{"address":"[fd00::12]:8080"}]`,
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("json.Marshal: got %s\nwant it to contain %s", data, want)
		}
	}
	if bytes.Contains(data, []byte(`"connect_timeout":"0s"`)) {
		t.Errorf("json.Marshal: a zero duration was written despite omitempty: %s", data)
	}
	var back config.Config
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("json.Unmarshal of json.Marshal: %v\n%s", err, data)
	}
	if !equal(&back, cfg) {
		again, _ := json.Marshal(&back)
		t.Errorf("JSON round trip changed the configuration:\ngot  %s\nwant %s", again, data)
	}
	if p := back.Tenants["shop"].Pools["api-v2"].Retries; p == nil || *p != 0 {
		t.Errorf("JSON round trip: retries: got %v, want a pointer to 0", p)
	}
	if p := back.Tenants["shop"].Pools["api-v3"].Retries; p != nil {
		t.Errorf("JSON round trip: unset retries: got %d, want nil", *p)
	}
	if err := back.Validate(); err != nil {
		t.Errorf("Validate after the JSON round trip: %v", err)
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		json string
		want time.Duration
		err  bool
	}{
		{`"15s"`, 15 * time.Second, false},
		{`"1m30s"`, 90 * time.Second, false},
		{`"0"`, 0, false},
		{`"0s"`, 0, false},
		{`"-1s"`, 0, true},
		{`"10 seconds"`, 0, true},
		{`""`, 0, true},
		{`15`, 0, true},
		{`true`, 0, true},
		{`["1s"]`, 0, true},
		// encoding/json passes null to UnmarshalJSON and expects it to be
		// a no-op ("not present"), as for any other field.
		{`null`, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.json, func(t *testing.T) {
			var v struct {
				D config.Duration `json:"d"`
			}
			err := json.Unmarshal([]byte(`{"d":`+tc.json+`}`), &v)
			if tc.err != (err != nil) || (!tc.err && v.D.Std() != tc.want) {
				t.Errorf(`json {"d":%s}: got %v, %v; want %v, error %v`, tc.json, v.D, err, tc.want, tc.err)
			}
		})
	}
	for _, d := range []time.Duration{0, time.Nanosecond, 1500 * time.Millisecond, 90 * time.Minute, 24 * time.Hour} {
		t.Run("round trip "+d.String(), func(t *testing.T) {
			data, err := json.Marshal(config.Duration(d))
			if err != nil {
				t.Fatal(err)
			}
			var back config.Duration
			if err := json.Unmarshal(data, &back); err != nil || back.Std() != d {
				t.Errorf("json %s: got %v, %v; want %v", data, back, err, d)
			}
		})
	}
}

func TestByteSizeJSON(t *testing.T) {
	tests := []struct {
		json string
		want config.ByteSize
		err  bool
	}{
		{`65536`, 65536, false},
		{`"65536"`, 65536, false},
		{`"64k"`, 64 << 10, false},
		{`"10MiB"`, 10 << 20, false},
		{`0`, 0, false},
		{`"ten"`, 0, true},
		{`-1`, 0, true},
		{`1.5`, 0, true},
		{`true`, 0, true},
		{`{}`, 0, true},
		// See TestDurationJSON: null must leave the value alone.
		{`null`, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.json, func(t *testing.T) {
			var v struct {
				B config.ByteSize `json:"b"`
			}
			err := json.Unmarshal([]byte(`{"b":`+tc.json+`}`), &v)
			if tc.err != (err != nil) || (!tc.err && v.B != tc.want) {
				t.Errorf(`json {"b":%s}: got %d, %v; want %d, error %v`, tc.json, v.B, err, tc.want, tc.err)
			}
		})
	}
	for _, b := range []config.ByteSize{0, 1, 64 << 10, 1 << 62} {
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var back config.ByteSize
		if err := json.Unmarshal(data, &back); err != nil || back != b {
			t.Errorf("json round trip of %d (%s): got %d, %v", b, data, back, err)
		}
	}
}
