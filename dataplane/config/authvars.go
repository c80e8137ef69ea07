package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// AuthVariables are the request variables external authentication
// interpolates in its url, request_redirect and signin_url, written $name
// or ${name} as in nginx. Each is a value of the request being judged:
//
//	host                 the Host, lower case, without port
//	http_host            the Host as the client sent it
//	best_http_host       the same as http_host
//	scheme               http or https, as the client used it (or a trusted proxy said)
//	pass_access_scheme   the same as scheme
//	request_uri          the path and query as the client sent them
//	escaped_request_uri  request_uri with every byte but letters, digits and -._~ percent-encoded
//	args                 the query without "?"
//	request_method       the method
//	remote_addr          the client's address
var AuthVariables = []string{
	"host", "http_host", "best_http_host", "scheme", "pass_access_scheme",
	"request_uri", "escaped_request_uri", "args", "request_method", "remote_addr",
}

// authHostVariables may stand for a URL's whole host.
var authHostVariables = []string{"host", "http_host", "best_http_host"}

// authSchemeVariables may stand for a sign-in URL's scheme.
var authSchemeVariables = []string{"scheme", "pass_access_scheme"}

// variableRE finds $name or ${name}.
var variableRE = regexp.MustCompile(`\$(\{[A-Za-z0-9_]*\}?|[A-Za-z0-9_]*)`)

// Segment is a piece of a template: literal text, or the variable Var.
type Segment struct {
	Text string
	Var  string
}

// ParseAuthTemplate splits s into literal text and the variables of
// AuthVariables; any other variable, or a "$" that starts none, is an
// error naming it.
func ParseAuthTemplate(s string) ([]Segment, error) {
	var segs []Segment
	last := 0
	for _, m := range variableRE.FindAllStringSubmatchIndex(s, -1) {
		name := strings.TrimSuffix(strings.TrimPrefix(s[m[2]:m[3]], "{"), "}")
		braced := strings.HasPrefix(s[m[2]:m[3]], "{")
		switch {
		case name == "" || braced && !strings.HasSuffix(s[m[2]:m[3]], "}"):
			return nil, fmt.Errorf("%q holds a $ that starts no variable", s)
		case !slices.Contains(AuthVariables, name):
			return nil, fmt.Errorf("%q holds the variable $%s, which is not interpolated (only $%s)", s, name, strings.Join(AuthVariables, ", $"))
		}
		if m[0] > last {
			segs = append(segs, Segment{Text: s[last:m[0]]})
		}
		segs = append(segs, Segment{Var: name})
		last = m[1]
	}
	if last < len(s) {
		segs = append(segs, Segment{Text: s[last:]})
	}
	return segs, nil
}

// HasAuthVariables reports whether s holds a variable (valid or not).
func HasAuthVariables(s string) bool { return strings.Contains(s, "$") }

// AuthURLParts are the parts of an external authentication URL template.
type AuthURLParts struct {
	// SchemeVar is the variable standing for the scheme, "" when it is
	// literal (Scheme).
	Scheme, SchemeVar string
	// HostVar is the variable standing for the whole host, "" when it is
	// literal (Host, with an optional port).
	Host, HostVar string
	// Rest is the path and query, variables allowed anywhere.
	Rest []Segment
}

// ParseAuthURL checks an http or https URL template: its scheme literal
// (or, with schemeVars, $scheme), its host literal or exactly one of $host,
// $http_host and $best_http_host (without port), its path and query any
// text and variables; no user, fragment, whitespace or control character.
func ParseAuthURL(raw string, schemeVars bool) (*AuthURLParts, error) {
	if raw == "" {
		return nil, fmt.Errorf("is required")
	}
	if err := ValidateHeaderValue(raw); err != nil || strings.ContainsAny(raw, " \t") {
		return nil, fmt.Errorf("%q must not hold control characters or whitespace", raw)
	}
	// Every variable first, so that one ramjetd does not provide is named
	// as such wherever it stands (the scheme and host checks below would
	// only say that it is not allowed there).
	if _, err := ParseAuthTemplate(raw); err != nil {
		return nil, err
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fmt.Errorf("%q must be an http or https URL", raw)
	}
	p := &AuthURLParts{Scheme: scheme}
	if err := p.parseScheme(raw, schemeVars); err != nil {
		return nil, err
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if err := p.parseHost(raw, rest[:end]); err != nil {
		return nil, err
	}
	segs, err := ParseAuthTemplate(rest[end:])
	if err != nil {
		return nil, err
	}
	p.Rest = segs
	// The URL with sample values must be one: no fragment, no user.
	u, err := url.Parse("http://h" + sample(segs))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("%q must not hold a fragment", raw)
	}
	return p, nil
}

func (p *AuthURLParts) parseScheme(raw string, schemeVars bool) error {
	if name, ok := strings.CutPrefix(p.Scheme, "$"); ok && schemeVars {
		name = strings.TrimSuffix(strings.TrimPrefix(name, "{"), "}")
		if !slices.Contains(authSchemeVariables, name) {
			return fmt.Errorf("%q: the scheme must be http, https or $scheme", raw)
		}
		p.Scheme, p.SchemeVar = "", name
		return nil
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return fmt.Errorf("%q must be an http or https URL", raw)
	}
	return nil
}

func (p *AuthURLParts) parseHost(raw, host string) error {
	if strings.Contains(host, "@") {
		return fmt.Errorf("%q must not hold a user or password", raw)
	}
	if !strings.Contains(host, "$") {
		if CheckHostPort(host) != nil {
			return fmt.Errorf("%q: the host must be a DNS name or an IP address, with an optional port 1..65535", raw)
		}
		p.Host = host
		return nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(host, "$"), "{"), "}")
	if !strings.HasPrefix(host, "$") || !slices.Contains(authHostVariables, name) || variableRE.FindString(host) != host {
		return fmt.Errorf("%q: a variable host must be $host, $http_host or $best_http_host alone, without port", raw)
	}
	p.HostVar = name
	return nil
}

// sample is segs with every variable replaced by a value of its form.
func sample(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Var == "" {
			b.WriteString(s.Text)
		} else {
			b.WriteString("v")
		}
	}
	return b.String()
}
