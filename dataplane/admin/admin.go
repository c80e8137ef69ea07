// Package admin is ramjetd's admin API, served on a unix socket only, and
// its client (used by `ramjetd upstreams` and by the controller).
//
//	POST /v1/reload             re-read, validate, compile and swap the configuration
//	PUT  /v1/upstreams/{pool}   replace the members of a members_from: api pool
//	GET  /v1/upstreams          every pool with its counters
//	GET  /v1/upstreams/{pool}   one pool with its members
//	GET  /v1/status             generation, configuration digest, load time
//	POST /v1/drain              start the drain of a shutdown; answers when the drain delay is over
//
// Errors are JSON objects {"error": "..."}; a refused configuration answers
// 422 with {"errors": ["path: reason", ...]}.
package admin

import (
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Status is the answer of GET /v1/status.
type Status struct {
	Generation uint64 `json:"generation"`
	// ConfigDigest is the sha256 of the configuration file loaded.
	ConfigDigest string    `json:"config_digest"`
	LoadedAt     time.Time `json:"loaded_at"`
	Ready        bool      `json:"ready"`
	// Listeners maps listener names (and "health") to the address they
	// are bound to, with the real port when the file said 0.
	Listeners map[string]string `json:"listeners"`
}

// Pool is one pool as GET /v1/upstreams and /v1/upstreams/{pool} show it.
type Pool struct {
	Name        string             `json:"name"`
	MembersFrom config.MembersFrom `json:"members_from"`
	Balance     config.Balance     `json:"balance"`
	Scheme      config.Scheme      `json:"scheme"`
	Retries     uint64             `json:"retries"`
	InFlight    int64              `json:"in_flight"`
	Failures    uint64             `json:"failures"`
	// Members is filled by GET /v1/upstreams/{pool} only; the list of
	// pools gives MemberCount.
	MemberCount int      `json:"member_count"`
	Members     []Member `json:"members,omitempty"`
}

// Member is one member with its counters (shared by every pool with the
// same address).
type Member struct {
	Address  string `json:"address"`
	Weight   uint32 `json:"weight"`
	InFlight int64  `json:"in_flight"`
	Requests uint64 `json:"requests"`
	Failures uint64 `json:"failures"`
}

// Members is the body of PUT /v1/upstreams/{pool}.
type Members struct {
	Members []config.Member `json:"members"`
}

// Reloaded is the answer of a successful POST /v1/reload.
type Reloaded struct {
	Generation uint64 `json:"generation"`
}

// Refused is the answer of a refused POST /v1/reload.
type Refused struct {
	Errors []string `json:"errors"`
}

type errorBody struct {
	Error string `json:"error"`
}

// Backend is what the admin API serves; the daemon implements it.
type Backend interface {
	// Reload loads the configuration file again. A *ConfigError means the
	// file was refused and nothing changed.
	Reload() (generation uint64, err error)
	// SetMembers checks members with the rules of the configuration
	// serving (config.ValidateMembers) and replaces the members of an api
	// pool with them; the errors are a *MembersError,
	// upstream.ErrUnknownPool and upstream.ErrStaticPool.
	SetMembers(pool string, members []config.Member) error
	// Pools lists the pools serving now, sorted by name, without members.
	Pools() []Pool
	// Pool returns one pool with its members.
	Pool(name string) (Pool, bool)
	// Status describes what is serving.
	Status() Status
	// Drain starts the drain a shutdown begins with (readiness off,
	// keep-alive clients told to close, serving goes on), unless it has
	// started, and returns a channel closed when its drain delay is over.
	Drain() <-chan struct{}
}

// MembersError is a member list SetMembers refused (PUT
// /v1/upstreams/{pool} answers 400 with its message, which names each
// member's field).
type MembersError struct {
	Err error
}

func (e *MembersError) Error() string { return e.Err.Error() }

func (e *MembersError) Unwrap() error { return e.Err }

// ConfigError is a configuration refused for the reasons listed.
type ConfigError struct {
	Problems []string
}

func (e *ConfigError) Error() string {
	if len(e.Problems) == 1 {
		return "configuration refused: " + e.Problems[0]
	}
	msg := "configuration refused:"
	for _, p := range e.Problems {
		msg += "\n  " + p
	}
	return msg
}
