package daemon

import (
	"slices"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

var _ admin.Backend = (*Daemon)(nil)

// Pools lists the pools serving now with their counters.
func (d *Daemon) Pools() []admin.Pool {
	pools := d.state.Pools()
	out := make([]admin.Pool, 0, len(pools))
	for _, name := range sortedKeys(pools) {
		out = append(out, describePool(pools[name], false))
	}
	return out
}

// Pool describes one pool with its members.
func (d *Daemon) Pool(name string) (admin.Pool, bool) {
	p := d.state.Pools()[name]
	if p == nil {
		return admin.Pool{}, false
	}
	return describePool(p, true), true
}

func describePool(p *upstream.Pool, withMembers bool) admin.Pool {
	set := p.Members()
	out := admin.Pool{
		Name:        p.Name,
		MembersFrom: p.Source,
		Balance:     p.Balance,
		Scheme:      p.Scheme,
		Retries:     p.Stats.Retries.Load(),
		MemberCount: set.Len(),
	}
	for i := range set.Len() {
		m := set.Member(i)
		out.InFlight += m.Stats.InFlight.Load()
		out.Failures += m.Stats.Failures.Load()
		if withMembers {
			out.Members = append(out.Members, admin.Member{
				Address:  m.Address,
				Weight:   m.Weight,
				InFlight: m.Stats.InFlight.Load(),
				Requests: m.Stats.Requests.Load(),
				Failures: m.Stats.Failures.Load(),
			})
		}
	}
	if withMembers && out.Members == nil {
		out.Members = []admin.Member{}
	}
	slices.SortFunc(out.Members, func(a, b admin.Member) int {
		if a.Address < b.Address {
			return -1
		}
		if a.Address > b.Address {
			return 1
		}
		return 0
	})
	return out
}

// configOf is the configuration of a generation, nil for none.
func configOf(gen *generation) *config.Config {
	if gen == nil {
		return nil
	}
	return gen.config
}

// applicationsOf lists the tenant and application names of a configuration,
// for forgetting the metrics of applications that are gone.
func applicationsOf(cfg *config.Config) [][2]string {
	if cfg == nil {
		return nil
	}
	var apps [][2]string
	for tname, t := range cfg.Tenants {
		if t == nil {
			continue
		}
		for aname := range t.Applications {
			apps = append(apps, [2]string{tname, aname})
		}
	}
	return apps
}

// poolsOf lists the pool names of a configuration.
func poolsOf(cfg *config.Config) []string {
	if cfg == nil {
		return nil
	}
	var pools []string
	for _, t := range cfg.Tenants {
		if t != nil {
			pools = append(pools, sortedKeys(t.Pools)...)
		}
	}
	return pools
}
