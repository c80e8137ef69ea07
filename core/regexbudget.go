package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// overBudget is an object whose regexes bring a host, or the whole file,
// over a regex budget: it is left out, and its paths of those hosts with
// it (kept as paths that answer 404, they would still cost what the budget
// forbids).
type overBudget struct {
	c       *Contribution
	hosts   []string
	finding Finding
}

// regexUse is what one object's regexes take of one host.
type regexUse struct {
	c    *Contribution
	host string
	size config.RegexSize
}

// overRegexBudget finds the objects ramjetd's validation would refuse for
// the size of their regexes together: in every host whose regexes compile
// to more instructions than one request may run (allowed, from
// config.Limits.RegexInstructionBudget), and in the file when its regexes
// take more than config.MaxRegexBudgetBytes. The objects spend a budget
// oldest first, so the older ones keep their paths and the first one that
// does not fit is left out.
func (r *rendering) overRegexBudget(allowed int) []overBudget {
	var out []overBudget
	var all []regexUse
	for _, name := range slices.Sorted(maps.Keys(r.tenant.Applications)) {
		uses, instructions := r.regexUses(name)
		all = append(all, uses...)
		if instructions > allowed {
			if c, host, ok := firstOver(uses, allowed, func(s config.RegexSize) int { return s.Instructions }); ok {
				out = append(out, overBudget{c: c, hosts: []string{host}, finding: budgetFinding(c, []string{host},
					fmt.Sprintf("the regexes of %s compile to more than the %d instructions one request may run (%d instruction-bytes over server.limits.max_regex_input_bytes)",
						hostPhrase(host), allowed, config.RegexWorkBudget))})
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if c, _, ok := firstOver(all, config.MaxRegexBudgetBytes, func(s config.RegexSize) int { return s.Bytes }); ok {
		hosts := usedHosts(all, c)
		out = append(out, overBudget{c: c, hosts: hosts, finding: budgetFinding(c, hosts,
			fmt.Sprintf("the regexes of the configuration compile to more than %d bytes together", config.MaxRegexBudgetBytes))})
	}
	return out
}

// regexUses returns what each object's regexes take of an application,
// and their instructions in all.
func (r *rendering) regexUses(name string) ([]regexUse, int) {
	app := r.tenant.Applications[name]
	host := inputHost(app.Domains[0])
	byObject := map[*Contribution]config.RegexSize{}
	total := 0
	for i, route := range app.Routes {
		size := route.Match.RegexSize()
		if size.Instructions == 0 {
			continue
		}
		total += size.Instructions
		for _, c := range r.sources[fmt.Sprintf("tenants.%s.applications.%s.routes[%d]", TenantName, name, i)] {
			s := byObject[c]
			byObject[c] = config.RegexSize{Instructions: s.Instructions + size.Instructions, Bytes: s.Bytes + size.Bytes}
		}
	}
	uses := make([]regexUse, 0, len(byObject))
	for c, size := range byObject {
		uses = append(uses, regexUse{c: c, host: host, size: size})
	}
	return uses, total
}

// firstOver spends the measure of the uses oldest object first and returns
// the use that goes over limit. ok is false when the uses fit (routes that
// no object rendered are left to validation).
func firstOver(uses []regexUse, limit int, measure func(config.RegexSize) int) (*Contribution, string, bool) {
	sorted := slices.Clone(uses)
	slices.SortStableFunc(sorted, func(a, b regexUse) int {
		switch {
		case a.c == b.c:
			return strings.Compare(a.host, b.host)
		case Older(a.c.Origin, b.c.Origin):
			return -1
		}
		return 1
	})
	spent := 0
	for _, u := range sorted {
		if spent += measure(u.size); spent > limit {
			return u.c, u.host, true
		}
	}
	return nil, "", false
}

// usedHosts lists the hosts where an object has regexes.
func usedHosts(uses []regexUse, c *Contribution) []string {
	var hosts []string
	for _, u := range uses {
		if u.c == c {
			hosts = append(hosts, u.host)
		}
	}
	slices.Sort(hosts)
	return hosts
}

// budgetFinding tells an object that its regexes do not fit: why names the
// budget.
func budgetFinding(c *Contribution, hosts []string, why string) Finding {
	var paths []string
	for _, rule := range c.Rules {
		if slices.Contains(hosts, rule.Host) {
			for _, p := range rule.Paths {
				paths = append(paths, Quote(p.Path))
			}
		}
	}
	what := "paths " + strings.Join(paths, ", ")
	if len(paths) == 1 {
		what = "path " + paths[0]
	}
	return Finding{Object: c.Origin, Reason: InvalidConfiguration, Message: cutMessage(fmt.Sprintf(
		"left out because its regexes make the configuration invalid: with its %s, %s; older objects keep theirs, "+
			"and this object's paths there are left out (their requests go to the host's other routes)", what, why))}
}

// dropHosts removes an object's paths of some hosts.
func dropHosts(c *Contribution, hosts []string) {
	rules := make([]Rule, 0, len(c.Rules))
	for _, rule := range c.Rules {
		if slices.Contains(hosts, rule.Host) {
			rule.Paths = nil
		}
		rules = append(rules, rule)
	}
	c.Rules = rules
}
