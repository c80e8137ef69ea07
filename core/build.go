package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Result is everything the controller publishes for one snapshot.
type Result struct {
	// Config is the whole ramjet.yaml: the base's server section and the
	// rendered tenant.
	Config *config.Config
	// Files are the certificates, keys, CA bundles and htpasswd files the
	// configuration names, by file name (within Options.FileDir).
	Files map[string][]byte
	// Findings are every object's problems, sorted.
	Findings []Finding
	// Objects tells, for each contributing object, whether it is served.
	Objects map[Origin]State
}

// State is what became of an object.
type State string

// The states of an object.
const (
	// Served: the object's routes are served (some may have conflicts).
	Served State = "served"
	// Rejected: the object is not served (refused, left out because it
	// made the configuration invalid, or a canary that joined no main
	// route); its paths answer 404.
	Rejected State = "rejected"
)

// Build merges contributions, renders them onto the server section of base
// and validates the result with the data plane's validation. When the
// result is invalid, the objects responsible are left out (they keep their
// paths, which answer 404) with an InvalidConfiguration finding, until it is
// valid: ramjetd never receives an invalid configuration. A host whose
// regexes compile to more than one request may run, or a file whose
// regexes take more memory than allowed, leaves out its newest objects
// until the rest fit, with their paths there (kept, they would still cost
// what the budget forbids).
func Build(cs []*Contribution, base *config.Server, opts Options) *Result {
	work := make([]*Contribution, len(cs))
	for i, c := range cs {
		cp := *c
		work[i] = &cp
	}
	isolation := resolveSharedHosts(work, addedListeners(work))
	for {
		m := Merge(work, opts)
		r := render(m, base, opts)
		if over := r.overRegexBudget(base.Limits.RegexInstructionBudget()); len(over) > 0 {
			for _, o := range over {
				isolation = append(isolation, o.finding)
				leaveOut(o.c)
				dropHosts(o.c, o.hosts)
			}
			continue
		}
		cfg := &config.Config{Server: *r.server, Tenants: map[string]*config.Tenant{TenantName: r.tenant}}
		err := cfg.Validate()
		if err == nil {
			return finish(cs, work, m, r, cfg, isolation)
		}
		culprits := r.culprits(err)
		if len(culprits) == 0 {
			// Nothing to blame: the base itself is broken, or an error
			// names no object. Fall back to adding objects one at a time.
			culprits = incremental(work, base, opts)
		}
		if len(culprits) == 0 {
			return finish(cs, work, m, r, cfg, append(isolation, baseFinding(err)...))
		}
		for c, problems := range culprits {
			isolation = append(isolation, Finding{Object: c.Origin, Reason: InvalidConfiguration,
				Message: cutMessage("left out because it makes the configuration invalid: " + strings.Join(problems, "; "))})
			leaveOut(c)
		}
	}
}

// culprits maps validation errors to the objects that rendered the fields
// they name.
func (r *rendering) culprits(err error) map[*Contribution][]string {
	out := map[*Contribution][]string{}
	for _, e := range config.Errors(err) {
		fe, ok := e.(*config.FieldError)
		if !ok {
			continue
		}
		for _, prefix := range fieldPrefixes(fe.Path) {
			for _, c := range r.sources[prefix] {
				if !c.Refused || hasInvalidPath(c) {
					out[c] = append(out[c], fe.Error())
				}
			}
		}
	}
	return out
}

// fieldPrefixes lists a field path and every path it is below:
// "a.b[1].c" gives "a.b[1].c", "a.b[1]", "a.b" and "a".
func fieldPrefixes(path string) []string {
	out := []string{path}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '.' || path[i] == '[' {
			out = append(out, path[:i])
		}
	}
	return out
}

// incremental adds the objects one at a time, oldest first, and returns
// those whose addition makes the configuration invalid.
func incremental(cs []*Contribution, base *config.Server, opts Options) map[*Contribution][]string {
	sorted := slices.Clone(cs)
	slices.SortStableFunc(sorted, func(a, b *Contribution) int {
		if Older(a.Origin, b.Origin) {
			return -1
		}
		return 0
	})
	out := map[*Contribution][]string{}
	var kept []*Contribution
	for _, c := range sorted {
		trial := append(slices.Clone(kept), c)
		r := render(Merge(trial, opts), base, opts)
		cfg := &config.Config{Server: *r.server, Tenants: map[string]*config.Tenant{TenantName: r.tenant}}
		if err := cfg.Validate(); err != nil {
			out[c] = []string{firstLine(err)}
			continue
		}
		kept = append(kept, c)
	}
	return out
}

// leaveOut turns an object into a refused one: it keeps its hosts and the
// paths that are valid (they answer 404); paths that cannot be rendered at
// all are dropped.
func leaveOut(c *Contribution) {
	c.Refused = true
	c.Settings = Settings{Regex: c.Settings.Regex, Canary: c.Settings.Canary}
	rules := make([]Rule, 0, len(c.Rules))
	for _, r := range c.Rules {
		var paths []Path
		for _, p := range r.Paths {
			if validPath(p, c.Settings.Regex) {
				paths = append(paths, p)
			}
		}
		rules = append(rules, Rule{Host: r.Host, Paths: paths})
	}
	c.Rules = rules
}

// hasInvalidPath reports whether a refused object still holds a path that
// cannot be rendered.
func hasInvalidPath(c *Contribution) bool {
	for _, r := range c.Rules {
		for _, p := range r.Paths {
			if !validPath(p, c.Settings.Regex) {
				return true
			}
		}
	}
	return false
}

// validPath reports whether a path renders as a valid match: a path of an
// object asking for regexes (Exact ones included) must compile; an exact or
// prefix path must be a normalised path. (On a host in regex mode the
// others' paths are escaped, which always compiles.)
func validPath(p Path, regex bool) bool {
	if regex {
		_, err := config.CompilePathRegex(p.Path)
		return err == nil
	}
	return config.ValidateRoutePath(p.Path) == nil
}

// finish assembles the result.
func finish(orig, work []*Contribution, m *Model, r *rendering, cfg *config.Config, isolation []Finding) *Result {
	var findings []Finding
	states := make(map[Origin]State, len(orig))
	for i, c := range orig {
		findings = append(findings, c.Findings...)
		states[c.Origin] = Served
		if work[i].Refused || m.Unserved[work[i]] {
			states[c.Origin] = Rejected
		}
	}
	findings = append(findings, m.Findings...)
	findings = append(findings, r.findings...)
	findings = append(findings, isolation...)
	return &Result{Config: cfg, Files: r.files, Findings: SortFindings(findings), Objects: states}
}

// baseFinding reports an invalid configuration no object can be blamed
// for: the base's server section. It names no object.
func baseFinding(err error) []Finding {
	return []Finding{{Object: Origin{Kind: "Configuration"}, Reason: InvalidConfiguration, Message: cutMessage(err.Error())}}
}

func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

func cutMessage(msg string) string {
	if len(msg) > MaxMessage {
		return msg[:MaxMessage-3] + "..."
	}
	return msg
}

// Summary counts the states of objects, for logs and metrics.
func (r *Result) Summary() string {
	served, rejected := 0, 0
	for _, s := range r.Objects {
		if s == Served {
			served++
		} else {
			rejected++
		}
	}
	return fmt.Sprintf("%d objects served, %d rejected, %d findings", served, rejected, len(r.Findings))
}
