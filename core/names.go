package core

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TenantName is the tenant that holds everything the controller renders.
const TenantName = "ingress"

// CatchAllApp is the application of the catch-all domain "*": rules
// without a host and the default backend.
const CatchAllApp = "default"

// AppName is the generated name of a host's application: h_ plus the host
// with "." turned into "_" and "*" removed (www.example.com gives
// h_www_example_com, *.example.com gives h__example_com); "" is the
// catch-all application.
func AppName(host string) string {
	if host == "" {
		return CatchAllApp
	}
	return cut("h_" + strings.ReplaceAll(strings.ReplaceAll(host, "*", ""), ".", "_"))
}

// AliasAppName is the generated name of the application of a host's
// aliases that its certificate does not cover: a_ plus the host as AppName
// writes it.
func AliasAppName(host string) string {
	return cut("a_" + strings.TrimPrefix(AppName(host), "h_"))
}

// RedirectAppName is the generated name of the application that redirects
// a www. twin to its host: w_ plus the twin as AppName writes it.
func RedirectAppName(from string) string {
	return cut("w_" + strings.TrimPrefix(AppName(from), "h_"))
}

// PoolName is the generated name of a Service port's pool:
// p_<namespace>_<service>_<port>, plus _<6 hex> of the settings when they
// are not the defaults, so that two objects using one Service with
// different settings get different pools.
func PoolName(namespace, service, port string, s PoolSettings) string {
	name := "p_" + namespace + "_" + service + "_" + port
	if !s.IsZero() {
		name += "_" + s.digest()[:6]
	}
	return cut(name)
}

// digest identifies pool settings.
func (p PoolSettings) digest() string {
	var cert, key []byte
	if p.ClientCert != nil {
		cert, key = p.ClientCert.CertPEM, p.ClientCert.KeyPEM
	}
	// JSON of the settings: every field, in a fixed order, each value
	// delimited, so different settings never give the same text.
	text, _ := json.Marshal(struct {
		Scheme          config.Scheme
		ServerName      string
		CA, Cert, Key   []byte
		Balance         config.Balance
		Hash            *config.Hash
		ServiceUpstream bool
		SkipVerify      bool `json:",omitempty"`
	}{p.Scheme, p.ServerName, p.CA, cert, key, p.Balance, p.Hash, p.ServiceUpstream, p.SkipVerify})
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

// cut shortens names over 63 characters, the limit of generated names: the
// first 54 characters, "_" and 8 hex digits of a hash of the full name.
func cut(name string) string {
	if len(name) <= config.MaxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:config.MaxNameLength-9] + "_" + hex.EncodeToString(sum[:])[:8]
}

// nameOwners records what each generated name stands for (a host, a
// Service port with settings), so that two different things cut to one
// name are caught.
type nameOwners map[string]string

// claim records identity as the owner of name; it returns the owner and
// whether that is identity.
func (n nameOwners) claim(name, identity string) (string, bool) {
	if owner, taken := n[name]; taken && owner != identity {
		return owner, false
	}
	n[name] = identity
	return identity, true
}
