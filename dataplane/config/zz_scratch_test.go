package config

import (
	"fmt"
	"testing"
)

func TestZZScratch(t *testing.T) {
	for _, e := range []string{`(a{1000}){1000}`, `\pL{1000}`, `[\pL\pN]{1000}`, `(?:\pL{1000}){2}`, `a{1000}`, `(\pL{100}){10}`, `\p{Greek}{1000}`} {
		n, err := programBytes("(?i)^(?:" + e + ")")
		fmt.Println(e, n, err)
	}
	_, err := CompilePathRegex(`\pL{1000}`)
	fmt.Println(err)
	re, err := CompilePathRegex(`/alpha)|(?:/beta`)
	fmt.Println(re, err)
	if re != nil {
		fmt.Println(re.MatchString("/xbeta"))
	}
	re, err = CompileValueRegex(`a)|(?:b`)
	fmt.Println(re, err)
	_, err = CompilePathRegex(`(`)
	fmt.Println(err)
	p, err := ParsePrefix("fe80::1%eth0")
	fmt.Println(p, err)
	p, err = ParsePrefix("::ffff:10.0.0.0/104")
	fmt.Println(p, err)
	p, err = ParsePrefix("::ffff:10.1.2.3")
	fmt.Println(p, err)
	for _, y := range []string{
		"server:\n  listeners: {}\ntenants:\n  t:\n    pools:\n      p:\n        members:\n          - {address: a:1, address: b:2}\n",
		"server:\n  listeners: {}\ntenants:\n  t:\n    pools:\n      p:\n        members:\n          - address: a:1\n            weigth: 2\n",
		"server:\n  listeners: {}\n---\nserver: {}\n",
		"server:\n  listeners: {}\n\n\n---\n",
		"",
		"# only a comment\n",
		"---\n",
		"~\n",
		"server: [a]\n",
		"server:\n  listeners: {}\n  listeners: {}\n",
		"hello\n",
		"server: {\n",
		"server:\n  limits:\n    idle_timeout: 10 seconds\n    max_header_bytes: ten\n",
		"server:\n\tlisteners: {}\n",
		"a: b: c\n",
		"server:\n  listeners:\n    http:\n      address: [1]\n  foo: 1\n",
		"server:\n  limits:\n    http2_max_concurrent_streams: -1\n",
		"tenants:\n  t:\n    pools:\n      p:\n        members: [[1]]\n",
		"tenants:\n  t:\n    pools:\n      p:\n        members: [{address: 'a:1', weight: heavy}]\n",
	} {
		c, err := Decode([]byte(y))
		fmt.Printf("%q\n  => %v | %v\n", y, c != nil, err)
		if c != nil && c.Tenants != nil {
			fmt.Printf("  %+v\n", c.Tenants["t"].Pools["p"].Members)
		}
	}
}
