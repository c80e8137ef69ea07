package registry

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown renders the annotation reference (docs/annotations.md) from the
// registered families: what a user migrating from ingress-nginx reads to
// know what each key does in Ramjet and how it differs.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString(markdownIntro)
	families := Families()
	b.WriteString("\n## Families\n\n| family | keys | access control |\n|---|---|---|\n")
	for _, f := range families {
		access := ""
		if f.AccessControl {
			access = "yes: fails closed"
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %d | %s |\n", f.Name, anchor(f.Name), len(f.Keys), access)
	}
	for _, f := range families {
		writeFamily(&b, f)
	}
	return b.Bytes()
}

func writeFamily(b *bytes.Buffer, f *Family) {
	fmt.Fprintf(b, "\n## %s\n\n%s\n", f.Name, f.Doc)
	if f.AccessControl {
		b.WriteString("\nAn access-control family: an invalid value, or the family being disabled with `--annotations`, makes the Ingress not served (fail closed).\n")
	}
	var served, ignored []Key
	for _, k := range f.Keys {
		if k.Ignored != "" {
			ignored = append(ignored, k)
		} else {
			served = append(served, k)
		}
	}
	if len(served) > 0 {
		b.WriteString("\n| key | default | in Ramjet | differs from ingress-nginx | risk |\n|---|---|---|---|---|\n")
		for _, k := range served {
			fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", keyName(k), code(k.Default), cell(k.Doc), cell(k.Differs), k.Risk)
		}
	}
	if len(ignored) > 0 {
		b.WriteString("\nNo counterpart in Ramjet: these keys get an `UnknownAnnotation` finding and are ignored.\n\n| key | in ingress-nginx | in Ramjet |\n|---|---|---|\n")
		for _, k := range ignored {
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", keyName(k), cell(k.Doc), cell(k.Ignored))
		}
	}
}

func keyName(k Key) string {
	if k.Wildcard {
		return k.Name + "*"
	}
	return k.Name
}

// anchor is the heading anchor GitHub and most renderers derive.
func anchor(name string) string { return strings.ToLower(strings.ReplaceAll(name, " ", "-")) }

func code(v string) string {
	if v == "" {
		return ""
	}
	return "`" + v + "`"
}

// cell makes text safe inside a table cell.
func cell(v string) string {
	return strings.ReplaceAll(strings.ReplaceAll(v, "|", `\|`), "\n", " ")
}

const markdownIntro = `# Annotations

<!-- Generated from the annotation registry: go test ./annotations/all -run TestDocs -update. Do not edit. -->

Ramjet reads the ` + "`nginx.ingress.kubernetes.io/*`" + ` annotations of ingress-nginx, so an
Ingress moves by changing its ` + "`ingressClassName`" + `. This page lists every key Ramjet
knows, family by family (` + "`--annotations`" + ` enables or disables families by these names:
` + "`all`, `all,-cors`, `rewrite,cors`" + `), what each does in Ramjet, and where Ramjet
behaves differently from ingress-nginx. ` + "`ramjet-ingress annotations`" + ` prints the same
list, and ` + "`ramjet-ingress translate`" + ` shows what your Ingresses would become.

## Values and problems

- Booleans are ` + "`true` or `false`" + ` (the other spellings ingress-nginx accepts, such as
  ` + "`True`" + ` and ` + "`1`" + `, work too). Durations are seconds (` + "`60`" + `) or Go-style (` + "`60s`" + `,
  ` + "`1m30s`" + `). Sizes are bytes with an optional ` + "`k`, `m` or `g`" + `.
- A value over 4096 bytes, not valid UTF-8, or holding control characters is invalid
  (snippets may hold line breaks: they are never interpreted). The comma-separated lists
  (source ranges, CORS) may have whitespace, line breaks included, around their entries,
  so a list written as a YAML block with one entry per line works; a line break inside
  an entry (entries separated by line breaks alone) is invalid.
- An invalid value of an access-control key (basic auth, source ranges, client
  certificates) makes the Ingress not served: its hosts and paths stay claimed and answer
  404, so nothing is ever served without the protection its owner asked for. The Event is ` + "`InvalidAnnotation`" + `.
- An invalid value of any other key is ignored: the route keeps the default, and an
  ` + "`InvalidAnnotation`" + ` Event names the key and the reason.
- A key under the prefix that Ramjet does not know, or has no counterpart for, gets one
  ` + "`UnknownAnnotation`" + ` Event and is ignored. A key of a family disabled with
  ` + "`--annotations`" + ` is ignored the same way, except for access-control families: an Ingress
  using one is not served.
- Only the prefix ` + "`nginx.ingress.kubernetes.io/`" + ` is read. If your ingress-nginx ran with
  ` + "`--annotations-prefix`" + `, rename the keys; an access-control key under another prefix
  gets an ` + "`UnknownAnnotation`" + ` Event saying it does not apply.
- Annotations apply to every path of the Ingress that carries them, as in ingress-nginx.
  Values never become configuration text: each is checked and turned into a typed field.
`
