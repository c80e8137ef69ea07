package globalratelimit

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// ParseKey reads global-rate-limit-key: text and nginx variables, $name or
// ${name}. The variables are remote_addr and binary_remote_addr (the client
// address), http_<name> (the request header <name>, underscores read as
// dashes) and cookie_<name>. An empty value is the client address alone.
func ParseKey(v string) ([]config.KeyPart, error) {
	var parts []config.KeyPart
	text := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].Text != "" {
			parts[n-1].Text += s
			return
		}
		parts = append(parts, config.KeyPart{Text: s})
	}
	for v != "" {
		i := strings.IndexByte(v, '$')
		if i < 0 {
			text(v)
			break
		}
		text(v[:i])
		name, rest, err := variable(v[i+1:])
		if err != nil {
			return nil, err
		}
		part, err := partOf(name)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
		v = rest
	}
	if len(parts) > config.MaxGlobalRateLimitKeyParts {
		return nil, fmt.Errorf("more than %d parts", config.MaxGlobalRateLimitKeyParts)
	}
	for _, p := range parts {
		if len(p.Text) > 256 || strings.ContainsFunc(p.Text, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("its text must be printable, at most 256 bytes")
		}
	}
	return parts, nil
}

// variable reads a variable's name after "$": name or {name}, and returns
// what follows.
func variable(s string) (string, string, error) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", "", fmt.Errorf("a ${ is not closed by }")
		}
		name := s[1:end]
		if name == "" || strings.IndexFunc(name, notNameChar) >= 0 {
			return "", "", fmt.Errorf("%s is not a variable name", core.Quote(name))
		}
		return name, s[end+1:], nil
	}
	end := strings.IndexFunc(s, notNameChar)
	if end < 0 {
		end = len(s)
	}
	if end == 0 {
		return "", "", fmt.Errorf("a $ is not followed by a variable name")
	}
	return s[:end], s[end:], nil
}

func notNameChar(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
}

// partOf is the key part of a variable.
func partOf(name string) (config.KeyPart, error) {
	switch {
	case name == "remote_addr" || name == "binary_remote_addr":
		return config.KeyPart{ClientAddress: true}, nil
	case strings.HasPrefix(name, "http_") && len(name) > len("http_"):
		return config.KeyPart{Header: strings.ReplaceAll(name[len("http_"):], "_", "-")}, nil
	case strings.HasPrefix(name, "cookie_") && len(name) > len("cookie_"):
		return config.KeyPart{Cookie: name[len("cookie_"):]}, nil
	}
	return config.KeyPart{}, fmt.Errorf("$%s is not a variable Ramjet counts by: use $remote_addr, $http_<header> or $cookie_<name>, with text between", name)
}
