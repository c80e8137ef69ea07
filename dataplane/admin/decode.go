package admin

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// membersUsage is what the body of PUT /v1/upstreams/{pool} must be.
const membersUsage = `the body must be {"members": [{"address": "host:port", "weight": 1}, ...]}`

// decodeMembers reads the body of PUT /v1/upstreams/{pool}: one JSON
// object whose member "members" is a list; only an explicit empty list
// empties the pool. Names are exact (case-sensitive); an unknown or
// repeated name, a value of the wrong type, data after the object and a
// body over maxBodyBytes are refused, each error naming the field.
func decodeMembers(body io.Reader) ([]config.Member, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading it: %w", membersUsage, err)
	}
	if len(data) > maxBodyBytes {
		return nil, fmt.Errorf("%s: it is longer than %d bytes", membersUsage, maxBodyBytes)
	}
	var req struct {
		Members *[]config.Member `json:"members"`
	}
	if err := jsonv2.Unmarshal(data, &req, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("%s: %s", membersUsage, describeJSON(err))
	}
	if req.Members == nil {
		return nil, fmt.Errorf(`%s: members: is required and must be a list; {"members": []} empties the pool`, membersUsage)
	}
	return *req.Members, nil
}

// describeJSON words a decoding error with the field it is about, written
// as members[0].weight.
func describeJSON(err error) string {
	var semantic *jsonv2.SemanticError
	var syntactic *jsontext.SyntacticError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is empty or cut short"
	case errors.As(err, &semantic) && semantic.Err == jsonv2.ErrUnknownName:
		return fmt.Sprintf("%s: unknown field", fieldPath(semantic.JSONPointer))
	case errors.As(err, &semantic):
		return fmt.Sprintf("%s: got %s, want %s", fieldPath(semantic.JSONPointer), jsonKind(semantic.JSONKind, semantic.JSONValue), goKind(semantic.GoType))
	case errors.As(err, &syntactic) && errors.Is(syntactic.Err, jsontext.ErrDuplicateName):
		return fmt.Sprintf("%s: given twice", fieldPath(syntactic.JSONPointer))
	case errors.As(err, &syntactic):
		return fmt.Sprintf("not one JSON object (at byte %d): %v", syntactic.ByteOffset, syntactic.Err)
	}
	return err.Error()
}

// fieldPath writes a JSON pointer ("/members/0/weight") as a field path
// ("members[0].weight"); the empty pointer is the body.
func fieldPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if plainName(tok) {
			b.WriteString(tok)
		} else {
			b.WriteString(strconv.Quote(tok))
		}
	}
	if b.Len() == 0 {
		return "the body"
	}
	return b.String()
}

// plainName reports whether a name can be written as it is: ASCII
// letters, digits and '_' (others are quoted, so that a name cannot forge
// a message).
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// jsonKind names what the body holds: "a string", "the number -1".
func jsonKind(k jsontext.Kind, v jsontext.Value) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		if len(v) > 0 && len(v) <= 32 {
			return "the number " + string(v)
		}
		return "a number"
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a value"
}

// goKind names what a field wants.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Pointer:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Uint32:
		return "a whole number"
	}
	return "another value"
}
