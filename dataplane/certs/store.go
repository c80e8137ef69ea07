package certs

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
)

// Store chooses the certificate to serve for a TLS ClientHello's server
// name: the certificate of the exact name first, then that of a wildcard of
// exactly one left-most label ("*.example.com" serves "a.example.com" but
// not "a.b.example.com" nor "example.com"), then that of the wildcard of
// one or more left-most labels with the longest suffix ("**.example.com"
// serves "a.example.com" and "a.b.example.com" but not "example.com";
// "**.b.example.com" comes before it for "a.b.example.com"), then the
// default certificate. These are the precedences of the router's domains.
//
// A Store is filled with Add before use and not changed after; it is then
// safe for concurrent use.
type Store struct {
	def   *tls.Certificate
	exact map[string]*tls.Certificate
	// wildcard is keyed by the parent of the wildcard domain:
	// "example.com" for "*.example.com".
	wildcard map[string]*tls.Certificate
	// deep is keyed by the parent of the "**." domain: "example.com"
	// for "**.example.com"; longestDeep is the length of its longest key,
	// 0 when it has none (Get then never reads it).
	deep        map[string]*tls.Certificate
	longestDeep int
}

// NewStore returns an empty Store that serves defaultCert when no name
// matches. defaultCert may be nil: the Store then serves nothing for a name
// that matches no domain.
func NewStore(defaultCert *tls.Certificate) *Store {
	return &Store{
		def:      defaultCert,
		exact:    make(map[string]*tls.Certificate),
		wildcard: make(map[string]*tls.Certificate),
		deep:     make(map[string]*tls.Certificate),
	}
}

// Add makes the Store serve cert for domain, an exact name
// ("www.example.com"), a wildcard of one left-most label ("*.example.com")
// or a wildcard of one or more ("**.example.com", a domain distinct from
// "*.example.com"). Case and a trailing dot are ignored. It is an error to
// add a domain twice. Add must not be called once the Store is in use.
func (s *Store) Add(domain string, cert *tls.Certificate) error {
	if cert == nil || len(cert.Certificate) == 0 {
		return fmt.Errorf("domain %q: no certificate", domain)
	}
	name := canonical(domain)
	if err := checkDomain(name); err != nil {
		return fmt.Errorf("domain %q: %w", domain, err)
	}
	m, key := s.exact, name
	if parent, ok := deepParent(name); ok {
		m, key = s.deep, parent
		s.longestDeep = max(s.longestDeep, len(parent))
	} else if parent, ok := wildcardParent(name); ok {
		m, key = s.wildcard, parent
	}
	if _, dup := m[key]; dup {
		return fmt.Errorf("domain %q: added twice", domain)
	}
	m[key] = cert
	return nil
}

// checkDomain reports whether a canonical domain is one Add accepts: a
// name without '*', or "*." or "**." followed by a name without '*'.
func checkDomain(name string) error {
	if name == "" {
		return errors.New("empty domain")
	}
	rest := name
	if parent, ok := deepParent(name); ok {
		rest = parent
	} else if parent, ok := wildcardParent(name); ok {
		rest = parent
	}
	if strings.Contains(rest, "*") {
		return errors.New("a wildcard must be the whole left-most label, as in *.example.com (one label) or **.example.com (one or more)")
	}
	for _, label := range strings.Split(rest, ".") {
		if label == "" {
			return errors.New("empty label")
		}
	}
	return nil
}

// Get returns the certificate to serve for serverName: the exact match,
// else the one-label wildcard match, else the "**." match of the longest
// suffix, else the default certificate (which may be nil). Case and a
// trailing dot are ignored; an empty name gets the default. Get does not
// allocate for a name already in lower case without a trailing dot.
func (s *Store) Get(serverName string) *tls.Certificate {
	name := canonical(serverName)
	if name == "" {
		return s.def
	}
	if c, ok := s.exact[name]; ok {
		return c
	}
	if parent, ok := parentOf(name); ok {
		if c, ok := s.wildcard[parent]; ok {
			return c
		}
		if s.longestDeep > 0 {
			if c := s.deepMatch(parent); c != nil {
				return c
			}
		}
	}
	return s.def
}

// deepMatch returns the certificate of the "**." domain of the longest
// suffix that parent (a name without its left-most label) is or ends in,
// or nil. Suffixes longer than the longest "**." domain are not looked
// up; none after an empty label matches.
func (s *Store) deepMatch(parent string) *tls.Certificate {
	for ok := true; ok; parent, ok = parentOf(parent) {
		if len(parent) <= s.longestDeep {
			if c, found := s.deep[parent]; found {
				return c
			}
		}
	}
	return nil
}

// GetCertificate returns the certificate for hello's server name as Get
// does, for use as tls.Config.GetCertificate. It returns an error when no
// certificate matches and the Store has no default.
func (s *Store) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.Get(hello.ServerName); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no certificate for server name %q", hello.ServerName)
}
