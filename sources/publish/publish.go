// Package publish hands the controller's configuration to ramjetd over the
// two channels of the data plane: the structure channel (generated files,
// ramjet.yaml, POST /v1/reload) and the member channel (PUT
// /v1/upstreams/{pool}, no reload). It also writes the bootstrap
// configuration the init container starts ramjetd with.
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// DefaultConfigName is the configuration file's name when
// Options.ConfigName is empty.
const DefaultConfigName = "ramjet.yaml"

// Options configure a Publisher.
type Options struct {
	// Dir (--out) holds ramjet.yaml and the generated files. It is created
	// with mode 0700 when missing.
	Dir string
	// ConfigName is the configuration file's name within Dir. Empty means
	// DefaultConfigName.
	ConfigName string
	// Admin is the client of ramjetd's admin socket. Required.
	Admin *admin.Client
	// Log receives the publisher's logs; nil means slog.Default().
	Log *slog.Logger
}

// Publisher publishes configurations to one ramjetd. Its methods may be
// called from several goroutines; they run one at a time.
type Publisher struct {
	dir, configName string
	admin           *admin.Client
	log             *slog.Logger

	mu sync.Mutex
	// accepted is the structural digest of the configuration ramjetd last
	// accepted; empty before the first accepted reload.
	accepted string
	// acceptedData is the ramjet.yaml ramjetd last accepted, written back
	// when it refuses a newer one. Until a reload is accepted it is the
	// file found at New (the bootstrap), or nil when there was none.
	acceptedData []byte
	// acceptedPools are the members_from: api pools of the configuration
	// last accepted; nil while unknown.
	acceptedPools map[string]bool
	// generation is the generation of the last accepted reload.
	generation uint64
	// sent holds, per pool, the members last sent successfully.
	sent map[string][]config.Member
}

// New returns a Publisher for opts. It creates Dir if needed, removes
// temporary files an earlier process left there, and keeps the
// configuration file already in Dir (the bootstrap) as the one to write
// back should ramjetd refuse the first publication.
func New(opts Options) (*Publisher, error) {
	if opts.Dir == "" {
		return nil, errors.New("publish: no folder for ramjet.yaml and the generated files")
	}
	if opts.Admin == nil {
		return nil, errors.New("publish: no admin client")
	}
	p := &Publisher{dir: opts.Dir, configName: opts.ConfigName, admin: opts.Admin, log: opts.Log, sent: map[string][]config.Member{}}
	if p.configName == "" {
		p.configName = DefaultConfigName
	}
	if err := checkConfigName(p.configName); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if err := removeTemporary(p.dir); err != nil {
		p.log.Warn("cannot remove temporary files left in the output folder", "dir", p.dir, "error", err)
	}
	data, err := os.ReadFile(p.configPath())
	switch {
	case err == nil:
		p.acceptedData = data
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("publish: %w", err)
	}
	return p, nil
}

func (p *Publisher) configPath() string { return filepath.Join(p.dir, p.configName) }

// RefusedError is a configuration ramjetd refused: the previous one keeps
// serving, and the last accepted ramjet.yaml was written back.
type RefusedError struct {
	// Problems are ramjetd's reasons, each "field path: reason" for a
	// refused file.
	Problems []string
	// Err is the admin client's error: an *admin.ConfigError, or an
	// *admin.APIError when the reload failed otherwise.
	Err error
}

func (e *RefusedError) Error() string {
	return "ramjetd refused the configuration, the previous one keeps serving: " + strings.Join(e.Problems, "; ")
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Structure publishes cfg and its files when cfg's structure (cfg with the
// members of every members_from: api pool left out) differs from the last
// one ramjetd accepted. files maps the name of every generated file cfg
// names (core.FileName: the sha256 of the content and an extension) to its
// content; cfg must be valid (core.Build validates it).
//
// The files are written first (mode 0600, each atomically, skipped when an
// identical file is there), then ramjet.yaml atomically, then POST
// /v1/reload. When ramjetd refuses, the last accepted ramjet.yaml is
// written back and the error is a *RefusedError with ramjetd's reasons;
// the next call publishes again even with the same cfg. When the admin
// socket cannot be reached (ramjetd restarting), nothing is written back:
// ramjet.yaml keeps cfg, which a restarting ramjetd reads; what ramjetd
// serves is then unknown, so the next call publishes whatever it is given
// and Members sends every pool again. After an accepted reload the generated files cfg
// does not name are removed. Structure reports whether a reload happened.
func (p *Publisher) Structure(ctx context.Context, cfg *config.Config, files map[string][]byte) (reloaded bool, err error) {
	if cfg == nil {
		return false, errors.New("publish: no configuration")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	digest, err := structureDigest(cfg)
	if err != nil {
		return false, err
	}
	if digest == p.accepted {
		return false, nil
	}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if err := checkFileName(name, files[name]); err != nil {
			return false, fmt.Errorf("publish: %w", err)
		}
	}
	data, err := Marshal(cfg)
	if err != nil {
		return false, err
	}
	written := 0
	for _, name := range names {
		wrote, err := writeFile(p.dir, name, files[name])
		if err != nil {
			return false, fmt.Errorf("publish: writing %s: %w", name, err)
		}
		if wrote {
			written++
		}
	}
	if err := writeAtomic(p.dir, p.configName, data); err != nil {
		return false, fmt.Errorf("publish: writing %s: %w", p.configName, err)
	}
	gen, err := p.admin.Reload(ctx)
	if err != nil {
		return false, p.reloadFailed(err)
	}
	p.acceptedReload(gen, digest, data, cfg)
	removed, err := removeUnreferenced(p.dir, files)
	if err != nil {
		p.log.Warn("cannot remove generated files the configuration no longer names", "dir", p.dir, "error", err)
	}
	p.log.Info("configuration reloaded", "generation", gen, "structure", digest[:12], "files_written", written, "files_removed", len(removed))
	return true, nil
}

// reloadFailed handles a reload that did not succeed: written back when
// ramjetd answered with a refusal, left as is when it did not answer.
func (p *Publisher) reloadFailed(err error) error {
	var refused *admin.ConfigError
	var failed *admin.APIError
	switch {
	case errors.As(err, &refused):
		return errors.Join(&RefusedError{Problems: refused.Problems, Err: err}, p.writeBack())
	case errors.As(err, &failed):
		return errors.Join(&RefusedError{Problems: []string{failed.Message}, Err: err}, p.writeBack())
	}
	// No answer: ramjetd may have loaded the new file or not, and may be
	// restarting (from the new file, without the members it was sent).
	// What it serves is unknown until a reload is accepted: the next call
	// publishes whatever it is given and sends every pool's members again.
	p.accepted, p.acceptedPools = "", nil
	clear(p.sent)
	return fmt.Errorf("publish: reload: %w; %s keeps the new configuration; the next publication reloads again", err, p.configName)
}

// writeBack restores the last accepted ramjet.yaml, so that a restarting
// ramjetd never starts from a file it refused.
func (p *Publisher) writeBack() error {
	if p.acceptedData == nil {
		p.log.Warn("no accepted configuration to write back; the refused one stays in place", "file", p.configPath())
		return nil
	}
	if err := writeAtomic(p.dir, p.configName, p.acceptedData); err != nil {
		return fmt.Errorf("publish: writing back the last accepted %s: %w", p.configName, err)
	}
	return nil
}

// acceptedReload records an accepted configuration. Member records are
// kept only for pools that existed before and after the reload in the
// same process: a pool the reload created (or re-created) took the file's
// seed, and a generation that did not grow means ramjetd restarted and
// holds the seeds only.
func (p *Publisher) acceptedReload(gen uint64, digest string, data []byte, cfg *config.Config) {
	pools := apiPools(cfg)
	restarted := gen <= p.generation
	for name := range p.sent {
		if _, now := pools[name]; restarted || !p.acceptedPools[name] || !now {
			delete(p.sent, name)
		}
	}
	p.acceptedPools = make(map[string]bool, len(pools))
	for name := range pools {
		p.acceptedPools[name] = true
	}
	p.accepted, p.acceptedData, p.generation = digest, data, gen
}

// structureDigest is the sha256 of cfg encoded with the members of every
// members_from: api pool left out: those members are only seeds, sent over
// the member channel, and never cause a reload. Static pools keep theirs,
// which only a reload changes.
func structureDigest(cfg *config.Config) (string, error) {
	c := *cfg
	c.Tenants = make(map[string]*config.Tenant, len(cfg.Tenants))
	for tname, t := range cfg.Tenants {
		if t == nil {
			c.Tenants[tname] = nil
			continue
		}
		tc := *t
		tc.Pools = make(map[string]*config.Pool, len(t.Pools))
		for pname, pool := range t.Pools {
			if pool == nil || pool.MembersFrom != config.MembersAPI {
				tc.Pools[pname] = pool
				continue
			}
			pc := *pool
			pc.Members = nil
			tc.Pools[pname] = &pc
		}
		c.Tenants[tname] = &tc
	}
	// JSON rather than the file's YAML: the same typed content (maps in
	// key order, so the digest is stable) at a fraction of the cost, on
	// every rebuild, endpoint changes included.
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(&c); err != nil {
		return "", fmt.Errorf("publish: digest of the configuration: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Restarted asks ramjetd whether it restarted since the last accepted
// reload: its generation went back (a new process starts from the file at
// generation 1). A restarted ramjetd holds only the file's seeds, which
// member-only changes never refresh, so the member records are forgotten:
// the caller's next Members sends every pool.
func (p *Publisher) Restarted(ctx context.Context) (bool, error) {
	status, err := p.admin.Status(ctx)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.generation == 0 || status.Generation >= p.generation {
		return false, nil
	}
	p.generation = status.Generation
	clear(p.sent)
	return true, nil
}
