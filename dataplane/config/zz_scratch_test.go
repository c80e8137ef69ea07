package config

import (
	"fmt"
	"testing"
)

func TestZZScratch(t *testing.T) {
	for _, y := range []string{
		"a: b: c\n",
		"server:\n  listeners:\n    x: y: z\n",
		"server:\n  listeners: {}\n  admin: {socket: x\n",
		"server:\n  listeners: {}\n  admin: [x\n",
		"server:\n  listeners: {}\n  - x\n",
		"server:\n  listeners: {}\n %%%\n",
		"server:\n  listeners: {}\n\"unterminated\n",
		"server:\n  listeners: {}\n@foo\n",
		"\x00\x01\x02",
		"server:\n  listeners: {}\n\x00\n",
		"{{{{",
		"server:\n  listeners: {}\nkey: 'a\n",
		"server:\n  listeners: {}\n  admin: *nope\n",
		"server:\n  listeners: {}\n  admin:\n    socket: x\n   bad: indent\n",
		"\xff\xfe garbage",
		"%YAML 9.9\n---\na: 1\n",
		"<html><body>not yaml</body></html>\n",
		"PK\x03\x04\x14\x00binary\n",
	} {
		_, err := Decode([]byte(y))
		fmt.Printf("%q\n  => %v\n", y, err)
	}
}
