package config

import "fmt"

func (r *RateLimit) validate(l *errorList, path string) {
	if r.Counts() && r.Zone == "" {
		l.add(path+".zone", "is required with rps, rpm or connections")
	}
	if len(r.Zone) > MaxRateLimitZone {
		l.add(path+".zone", "must be at most %d bytes", MaxRateLimitZone)
	}
	for i := 0; i < len(r.Zone); i++ {
		if c := r.Zone[i]; c < 0x21 || c == 0x7f {
			l.add(path+".zone", "must be printable, without spaces")
			break
		}
	}
	if r.RPS > MaxRateLimitRate {
		l.add(path+".rps", "must be at most %d", MaxRateLimitRate)
	}
	if r.RPM > MaxRateLimitRate {
		l.add(path+".rpm", "must be at most %d", MaxRateLimitRate)
	}
	if r.RPSBurst > MaxRateLimitBurst {
		l.add(path+".rps_burst", "must be at most %d", MaxRateLimitBurst)
	}
	if r.RPMBurst > MaxRateLimitBurst {
		l.add(path+".rpm_burst", "must be at most %d", MaxRateLimitBurst)
	}
	if r.Connections > MaxRateLimitConnections {
		l.add(path+".connections", "must be at most %d", MaxRateLimitConnections)
	}
	validateRanges(l, path+".allowlist", r.Allowlist)
	if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
		l.add(path+".status", "must be 400..599 (0 means 503), not %d", r.Status)
	}
	if r.Rate < 0 {
		l.add(path+".rate", "must be 0 (no limit) or more")
	}
	if r.RateAfter < 0 {
		l.add(path+".rate_after", "must be 0 or more")
	}
}

// zoneLimits are the settings of a rate-limit zone that every route naming
// it must share.
type zoneLimits struct {
	rps, rpsBurst, rpm, rpmBurst, connections uint32
}

// validateZones checks that the routes naming one rate-limit zone count
// the same limits: a zone is one set of counters.
func (c *Config) validateZones(l *errorList) {
	type first struct {
		path   string
		limits zoneLimits
	}
	seen := map[string]first{}
	check := func(path string, p *Policies) {
		if p == nil || p.RateLimit == nil || !p.RateLimit.Counts() || p.RateLimit.Zone == "" {
			return
		}
		r := p.RateLimit
		lim := zoneLimits{r.RPS, r.RPSBurst, r.RPM, r.RPMBurst, r.Connections}
		if f, ok := seen[r.Zone]; ok && f.limits != lim {
			l.add(path+".rate_limit", "zone %q counts other limits at %s: routes of one zone must set the same rps, rpm, bursts and connections", r.Zone, f.path)
			return
		} else if !ok {
			seen[r.Zone] = first{path + ".rate_limit", lim}
		}
	}
	for _, tname := range sortedKeys(c.Tenants) {
		t := c.Tenants[tname]
		if t == nil {
			continue
		}
		path := "tenants." + tname
		if t.DefaultRoute != nil {
			check(path+".default_route.policies", t.DefaultRoute.Policies)
		}
		for _, aname := range sortedKeys(t.Applications) {
			app := t.Applications[aname]
			if app == nil {
				continue
			}
			apath := path + ".applications." + aname
			for i, r := range app.Routes {
				if r != nil {
					check(fmt.Sprintf("%s.routes[%d].policies", apath, i), r.Policies)
				}
			}
			if app.DefaultRoute != nil {
				check(apath+".default_route.policies", app.DefaultRoute.Policies)
			}
		}
	}
}
