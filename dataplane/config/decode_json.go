package config

import (
	"bytes"

	jsonv2 "github.com/go-json-experiment/json"
)

// decodeJSON is the fast path of Decode for a configuration in JSON form,
// after any comment lines: exact, case-sensitive names, unknown members,
// duplicate names, invalid UTF-8 and trailing data refused. It reports false
// for anything it does not accept, which the YAML decoder then reads and
// words the errors of. It never accepts what the YAML decoder would refuse
// or read otherwise (TestDecodeJSONAgreesWithYAML, FuzzDecodeJSON): the JSON
// and YAML names of every field are the same (TestJSONNamesMatchYAML), and
// the types that read themselves do so alike in both.
func decodeJSON(data []byte) (*Config, bool) {
	body := skipCommentLines(data)
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	var cfg Config
	if err := jsonv2.Unmarshal(body, &cfg, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, false
	}
	return &cfg, true
}

// skipCommentLines returns data after its leading blank lines and YAML
// comment lines ("# ...").
func skipCommentLines(data []byte) []byte {
	for {
		data = bytes.TrimLeft(data, " \t\r\n")
		if len(data) == 0 || data[0] != '#' {
			return data
		}
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return nil
		}
		data = data[end+1:]
	}
}
