// Package upstream turns configured pools into runtime pools: a member set
// that a request reads through an atomic pointer, a balancing algorithm, and
// a transport with keep-alive connections per member.
//
// What must outlive a configuration lives in a State, carried forward by
// identity: round-robin cursors by pool name, in-flight and failure counters
// by member address, the members of api pools by pool name, and transports
// (with their idle connections) by their settings. A request that starts
// under one generation and ends under the next therefore decrements the
// counter it incremented, and a reload neither forgets how loaded a member is
// nor drops idle connections.
package upstream

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Errors of SetMembers.
var (
	ErrUnknownPool = errors.New("no such pool")
	ErrStaticPool  = errors.New("the pool's members come from the configuration file (members_from: static)")
)

// Observer receives a measurement, such as a prometheus histogram.
type Observer interface{ Observe(float64) }

// PoolStats are a pool's counters that survive reloads.
type PoolStats struct {
	Retries atomic.Uint64
}

// Pool is a pool of one configuration generation.
type Pool struct {
	Name    string
	Scheme  config.Scheme
	Source  config.MembersFrom
	Balance config.Balance
	Hash    config.Hash // meaningful with balance: hash; cookie defaults filled
	// AffinityTag names the pool in its session cookies (hash by: cookie),
	// so that a weighted action with sticky finds the pool that set a
	// cookie: the base-36 HashKey of the pool's name, the same in every
	// process. Empty for other pools.
	AffinityTag string
	Retries     int
	Transport   *Transport
	Algorithm   balancer.Algorithm
	Stats       *PoolStats
	// Latency observes the seconds from sending a request to a member to
	// its response head. Nil observes nothing.
	Latency Observer

	members  *atomic.Pointer[balancer.Set]
	dialer   *memberDialer
	settings transportSettings
	files    tlsFiles
}

// Dial connects to one member's address for a spliced connection, within
// the pool's connect_timeout and under the address rule for names (see
// memberDialer). Its error is a *DialError.
func (p *Pool) Dial(ctx context.Context, address string) (net.Conn, error) {
	c, err := p.dialer.dial(ctx, "tcp", address)
	if err != nil {
		return nil, &DialError{Address: address, Err: err}
	}
	return c, nil
}

// Members returns the current member set.
func (p *Pool) Members() *balancer.Set { return p.members.Load() }

// State is what outlives a configuration generation. Its methods are safe
// for concurrent use; Build, Commit and SetMembers are meant to be called by
// one admin goroutine at a time.
type State struct {
	mu         sync.Mutex
	cursors    map[string]*atomic.Uint64
	poolStats  map[string]*PoolStats
	stats      map[string]*balancer.Stats
	transports map[transportSettings]*Transport
	committed  map[string]*Pool
}

// NewState returns an empty State.
func NewState() *State {
	return &State{
		cursors:    map[string]*atomic.Uint64{},
		poolStats:  map[string]*PoolStats{},
		stats:      map[string]*balancer.Stats{},
		transports: map[transportSettings]*Transport{},
		committed:  map[string]*Pool{},
	}
}

// Build makes the runtime pool called name from its configuration, reusing
// what the committed generation has under the same identities. A pool with
// members_from: api that the committed generation already has keeps its
// current members; the file's members are only the seed of a new one.
// Errors name the file that could not be used.
func (s *State) Build(name string, cfg *config.Pool) (*Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	settings, files, err := settingsOf(cfg)
	if err != nil {
		return nil, err
	}
	transport := s.transport(settings, files)
	p := &Pool{
		Name:      name,
		Scheme:    schemeOf(cfg),
		Source:    sourceOf(cfg),
		Balance:   balanceOf(cfg),
		Retries:   retriesOf(cfg),
		Transport: transport,
		Stats:     s.poolStatsFor(name),
		settings:  settings,
		files:     files,
		dialer:    newMemberDialer(settings.connectTimeout, settings.sendTimeout),
	}
	p.Algorithm, p.Hash = s.algorithm(name, cfg)
	if p.Hash.By == config.HashByCookie {
		p.AffinityTag = strconv.FormatUint(balancer.HashKey(name), 36)
	}
	if old := s.committed[name]; old != nil && old.Source == config.MembersAPI && p.Source == config.MembersAPI {
		p.members = old.members
	} else {
		p.members = new(atomic.Pointer[balancer.Set])
		p.members.Store(s.memberSet(cfg.Members, p.Algorithm))
	}
	return p, nil
}

func (s *State) algorithm(name string, cfg *config.Pool) (balancer.Algorithm, config.Hash) {
	switch balanceOf(cfg) {
	case config.BalanceLeastConn:
		return balancer.LeastConn{Cursor: s.cursorFor(name)}, config.Hash{}
	case config.BalanceHash:
		h := *cfg.Hash
		h.Header = http.CanonicalHeaderKey(h.Header)
		if h.By == config.HashByCookie {
			c := config.AffinityCookie{}
			if h.Cookie != nil {
				c = *h.Cookie
			}
			if c.Name == "" {
				c.Name = config.DefaultAffinityCookie
			}
			if c.Path == "" {
				c.Path = "/"
			}
			h.Cookie = &c
			if c.Mode == config.AffinityPersistent {
				return balancer.Persistent{}, h
			}
		}
		if h.SubsetSize > 0 {
			return balancer.Subset{Size: h.SubsetSize}, h
		}
		return balancer.Hash{}, h
	}
	return balancer.RoundRobin{Cursor: s.cursorFor(name)}, config.Hash{}
}

// settingsOf returns the transport settings of a pool and what they name
// in its files, read now: a reload whose files changed content gets other
// settings, hence a new transport.
func settingsOf(cfg *config.Pool) (transportSettings, tlsFiles, error) {
	settings := transportSettings{
		scheme:          schemeOf(cfg),
		connectTimeout:  cfg.ConnectTimeout.Or(config.DefaultConnectTimeout),
		responseTimeout: cfg.ResponseTimeout.Or(config.DefaultResponseTimeout),
	}
	var files tlsFiles
	if cfg.TLS == nil {
		return settings, files, nil
	}
	settings.serverName, settings.skipVerify = cfg.TLS.ServerName, cfg.TLS.InsecureSkipVerify
	if cfg.TLS.CAFile != "" {
		data, err := certs.ReadFile(cfg.TLS.CAFile)
		if err != nil {
			return settings, files, fmt.Errorf("tls.ca_file: %w", err)
		}
		if files.roots, err = certs.LoadCAPool(data); err != nil {
			return settings, files, fmt.Errorf("tls.ca_file: %w", err)
		}
		sum := sha256.Sum256(data)
		settings.caDigest = hex.EncodeToString(sum[:])
	}
	if cfg.TLS.CertFile != "" || cfg.TLS.KeyFile != "" {
		cert, err := certs.LoadFiles(cfg.TLS.CertFile, cfg.TLS.KeyFile)
		if err != nil {
			return settings, files, fmt.Errorf("%s: %w", clientCertField(err, cfg.TLS.CertFile, cfg.TLS.KeyFile), err)
		}
		files.clientCert = cert
		settings.clientCertDigest = chainDigest(cert)
	}
	return settings, files, nil
}

// clientCertField names the field an error of certs.LoadFiles concerns: its
// errors start with the path of the file at fault.
func clientCertField(err error, certFile, keyFile string) string {
	var pathErr *fs.PathError
	switch {
	case certFile == keyFile:
		return "tls.cert_file and tls.key_file"
	case errors.As(err, &pathErr) && pathErr.Path == keyFile, strings.HasPrefix(err.Error(), keyFile+": "):
		return "tls.key_file"
	}
	return "tls.cert_file"
}

// chainDigest is the sha256 of a certificate chain, each certificate's DER
// preceded by its length. certs.LoadFiles checked that the key is the one
// of the leaf's public key, so the chain identifies the key too, and no
// digest of key material is kept.
func chainDigest(cert *tls.Certificate) string {
	h := sha256.New()
	for _, der := range cert.Certificate {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(der))))
		h.Write(der)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// transport returns the transport of settings, shared with every pool and
// route that has the same; files hold what its settings name.
func (s *State) transport(settings transportSettings, files tlsFiles) *Transport {
	if t := s.transports[settings]; t != nil {
		return t
	}
	t := newTransport(settings, files)
	s.transports[settings] = t
	return t
}

// Variant returns the transport of pool p with other timeouts (a route's
// own); zero keeps the pool's. Routes with equal timeouts share it, and it
// lives as long as a committed generation uses it (see Commit).
func (s *State) Variant(p *Pool, connect, response time.Duration) *Transport {
	return s.VariantOf(p, Overrides{Connect: connect, Response: response})
}

// Overrides are what a route changes in its pools' transports; zero fields
// keep the pool's.
type Overrides struct {
	Connect, Response time.Duration
	// Send bounds the time between two writes to a member; pools set no
	// bound.
	Send time.Duration
	// MaxHeaderBytes bounds a member's response head, instead of
	// MaxResponseHeaderBytes.
	MaxHeaderBytes int64
}

// VariantOf returns the transport of pool p with a route's overrides, as
// Variant.
func (s *State) VariantOf(p *Pool, o Overrides) *Transport {
	settings := p.settings
	if o.Connect > 0 {
		settings.connectTimeout = o.Connect
	}
	if o.Response > 0 {
		settings.responseTimeout = o.Response
	}
	if o.Send > 0 {
		settings.sendTimeout = o.Send
	}
	if o.MaxHeaderBytes > 0 {
		settings.maxHeaderBytes = o.MaxHeaderBytes
	}
	if settings == p.settings {
		return p.Transport
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.transport(settings, p.files)
}

// Commit records pools as the generation now serving and releases what it
// does not use: transports other than its pools' and the route variants
// given (their idle connections are closed), cursors and counters of pools
// and members that are gone. Counters of members with requests still in
// flight are kept until those finish.
func (s *State) Commit(pools map[string]*Pool, variants []*Transport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.committed = pools
	usedTransports := map[*Transport]bool{}
	for _, p := range pools {
		usedTransports[p.Transport] = true
	}
	for _, t := range variants {
		usedTransports[t] = true
	}
	for key, t := range s.transports {
		if !usedTransports[t] {
			t.Close()
			delete(s.transports, key)
		}
	}
	for name := range s.cursors {
		if pools[name] == nil {
			delete(s.cursors, name)
		}
	}
	for name := range s.poolStats {
		if pools[name] == nil {
			delete(s.poolStats, name)
		}
	}
	s.pruneStats()
}

// pruneStats drops counters of addresses no committed pool has.
func (s *State) pruneStats() {
	used := map[string]bool{}
	for _, p := range s.committed {
		set := p.Members()
		for i := range set.Len() {
			used[set.Member(i).Address] = true
		}
	}
	for addr, st := range s.stats {
		if !used[addr] && st.InFlight.Load() == 0 {
			delete(s.stats, addr)
		}
	}
}

// SetMembers replaces the members of a committed members_from: api pool.
// The members must have been validated (config.ValidateMembers). A list
// equal to the current one (the controller resends every pool
// periodically) changes nothing.
func (s *State) SetMembers(name string, members []config.Member) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.committed[name]
	switch {
	case p == nil:
		return ErrUnknownPool
	case p.Source != config.MembersAPI:
		return ErrStaticPool
	case sameMembers(p.Members(), members):
		return nil
	}
	p.members.Store(s.memberSet(members, p.Algorithm))
	s.pruneStats()
	return nil
}

// sameMembers reports whether set holds exactly members, in order.
func sameMembers(set *balancer.Set, members []config.Member) bool {
	if set.Len() != len(members) {
		return false
	}
	for i, m := range members {
		if got := set.Member(i); got.Address != m.Address || got.Weight != max(m.Weight, 1) {
			return false
		}
	}
	return true
}

// Pools returns the committed pools by name. The map must not be changed.
func (s *State) Pools() map[string]*Pool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.committed
}

// memberSet builds a set whose members share the counters of their
// address, with what the pool's algorithm needs (a hash ring, say) ready.
func (s *State) memberSet(members []config.Member, alg balancer.Algorithm) *balancer.Set {
	list := make([]balancer.Member, len(members))
	for i, m := range members {
		list[i] = balancer.Member{Address: m.Address, Weight: max(m.Weight, 1), Stats: s.statsFor(m.Address)}
	}
	set := balancer.NewSet(list)
	if p, ok := alg.(balancer.Preparer); ok {
		p.Prepare(set)
	}
	return set
}

func (s *State) statsFor(addr string) *balancer.Stats {
	st := s.stats[addr]
	if st == nil {
		st = new(balancer.Stats)
		s.stats[addr] = st
	}
	return st
}

func (s *State) cursorFor(pool string) *atomic.Uint64 {
	c := s.cursors[pool]
	if c == nil {
		c = new(atomic.Uint64)
		s.cursors[pool] = c
	}
	return c
}

func (s *State) poolStatsFor(pool string) *PoolStats {
	st := s.poolStats[pool]
	if st == nil {
		st = new(PoolStats)
		s.poolStats[pool] = st
	}
	return st
}

func schemeOf(cfg *config.Pool) config.Scheme {
	if cfg.Scheme == "" {
		return config.SchemeHTTP
	}
	return cfg.Scheme
}

func sourceOf(cfg *config.Pool) config.MembersFrom {
	if cfg.MembersFrom == "" {
		return config.MembersStatic
	}
	return cfg.MembersFrom
}

func balanceOf(cfg *config.Pool) config.Balance {
	if cfg.Balance == "" {
		return config.BalanceRoundRobin
	}
	return cfg.Balance
}

func retriesOf(cfg *config.Pool) int {
	if cfg.Retries == nil {
		return config.DefaultRetries
	}
	return *cfg.Retries
}
