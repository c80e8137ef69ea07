package publish

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Members sends PUT /v1/upstreams/{pool} with the full member list of every
// members_from: api pool of the controller's tenant whose members differ
// from those last sent successfully, or of every such pool when all is true
// (the periodic repair of a missed update or a restarted ramjetd). Pools
// are sent in name order; pools no longer in cfg are forgotten. A pool
// ramjetd does not have (the reload that adds it was refused, say) is an
// error for that pool and the others are still sent; when the admin socket
// cannot be reached, Members stops at the first pool. It returns the
// number of pools sent and the errors of the others, joined, each naming
// its pool.
func (p *Publisher) Members(ctx context.Context, cfg *config.Config, all bool) (sent int, err error) {
	if cfg == nil {
		return 0, errors.New("publish: no configuration")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pools := apiPools(cfg)
	for name := range p.sent {
		if _, ok := pools[name]; !ok {
			delete(p.sent, name)
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(pools)) {
		members := pools[name]
		if last, ok := p.sent[name]; ok && !all && slices.Equal(last, members) {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		err := p.admin.SetMembers(ctx, name, members)
		if err == nil {
			p.sent[name] = slices.Clone(members)
			sent++
			continue
		}
		delete(p.sent, name)
		var answer *admin.APIError
		if !errors.As(err, &answer) {
			// No answer: ramjetd is probably restarting and comes back
			// with the seeds of its file only.
			clear(p.sent)
			errs = append(errs, fmt.Errorf("publish: members of pool %s: %w", name, err))
			break
		}
		if answer.Status == http.StatusNotFound {
			err = fmt.Errorf("ramjetd does not have this pool (its reload was refused or has not happened yet): %w", err)
		}
		errs = append(errs, fmt.Errorf("publish: members of pool %s: %w", name, err))
	}
	if sent > 0 {
		p.log.Debug("members sent", "pools", sent, "all", all)
	}
	return sent, errors.Join(errs...)
}

// apiPools returns the members of every members_from: api pool of the
// controller's tenant.
func apiPools(cfg *config.Config) map[string][]config.Member {
	pools := map[string][]config.Member{}
	t := cfg.Tenants[core.TenantName]
	if t == nil {
		return pools
	}
	for name, pool := range t.Pools {
		if pool != nil && pool.MembersFrom == config.MembersAPI {
			pools[name] = pool.Members
		}
	}
	return pools
}
