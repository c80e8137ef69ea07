package core

import (
	"fmt"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// regexIng is a contribution asking for regex paths.
func regexIng(name string, minutes int, host string, paths ...string) *Contribution {
	c := ing("a", name, minutes)
	var ps []Path
	for _, p := range paths {
		ps = append(ps, prefix(p, "web"))
	}
	c.Settings.Regex = true
	return c.rule(host, ps...)
}

// TestRegexBudgetOfAHost checks that when the regexes of a host's objects
// together compile to more than one request may run (512 instructions at
// the default input bound), the newest object that does not fit is left
// out with its paths of the host, whatever the order of the routes; older
// objects, and the object on its other hosts, are not touched by it.
func TestRegexBudgetOfAHost(t *testing.T) {
	// 246 instructions each: two fit, with room for 20 more.
	old := regexIng("old", 0, "x.test", "/a/.{0,120}", "/b/.{0,120}")
	// The newer path is longer, so its route comes first.
	newer := regexIng("new", 1, "x.test", "/newer/and/longer/path/(.*)").rule("y.test", prefix("/y", "web"))
	small := regexIng("small", 2, "x.test", "/c")
	r := build(t, Options{}, small, newer, old)
	wantServed(t, r,
		"h_x_test /a/.{0,120} -> p_ns_web_80",
		"h_x_test /b/.{0,120} -> p_ns_web_80",
		"h_x_test /c -> p_ns_web_80",
		"h_y_test /y -> 404")
	wantFinding(t, r, "a/new", InvalidConfiguration, `with its path "/newer/and/longer/path/(.*)", the regexes of host "x.test" compile to more than the 512 instructions one request may run`)
	if r.Objects[newer.Origin] != Rejected || r.Objects[old.Origin] != Served || r.Objects[small.Origin] != Served {
		t.Errorf("states %v, want a/new rejected and the others served", r.Objects)
	}

	// A lower input bound takes them all.
	base := *testBase
	base.Limits.MaxRegexInputBytes = 4 << 10
	r = Build([]*Contribution{small, newer, old}, &base, Options{})
	if len(r.Config.Tenants[TenantName].Applications["h_x_test"].Routes) != 4 || r.Objects[newer.Origin] != Served {
		t.Errorf("at 4 KiB: states %v, want every object served", r.Objects)
	}
}

// TestRegexBudgetOfTheFile checks the regex memory of the whole file
// (config.MaxRegexBudgetBytes): once spent, the newest objects are left
// out with their regex paths, so that the build ends with a valid
// configuration. Kept as paths that answer 404, they would still hold the
// memory, and the build would never end.
func TestRegexBudgetOfTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles about 70 MiB of regular expressions")
	}
	// \pL{190} compiles to just under 1 MiB; 64 fit.
	var cs []*Contribution
	for i := range 70 {
		cs = append(cs, regexIng(fmt.Sprintf("r%02d", i), i, fmt.Sprintf("r%02d.test", i), `/r/\pL{190}`))
	}
	r := build(t, Options{}, cs...)
	rejected := 0
	for i, c := range cs {
		if r.Objects[c.Origin] == Rejected {
			rejected++
			wantFinding(t, r, c.Origin.Namespace+"/"+c.Origin.Name, InvalidConfiguration,
				fmt.Sprintf("the regexes of the configuration compile to more than %d bytes together", config.MaxRegexBudgetBytes))
			if i < 64 {
				t.Errorf("%s (number %d by age) is rejected, want only objects after the 64th", c.Origin.Name, i+1)
			}
		}
	}
	if rejected == 0 {
		t.Errorf("no object rejected, want the newest left out")
	}
}
