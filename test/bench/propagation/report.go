package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// goal is DECISIONS.md's and issue 6's p50 goal for lone changes at a size
// (0 when there is none).
func goal(routes int) time.Duration {
	switch routes {
	case 0:
		return 100 * time.Millisecond
	case 5000:
		return 250 * time.Millisecond
	}
	return 0
}

// markdown is the report.
func (res *results) markdown(end time.Time) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m, o := res.machine, res.opts
	cpu := readCPU()
	busy, steal := "?", "?"
	if total := cpu.total - res.cpu.total; total > 0 {
		busy = fmt.Sprintf("%.0f%%", 100*(cpu.busy-res.cpu.busy)/total)
		steal = fmt.Sprintf("%.1f%%", 100*(cpu.steal-res.cpu.steal)/total)
	}
	p("# Controller propagation: API write to ramjetd\n\n")
	p("- Machine: %s, %d cores, %s memory, Linux %s, %s.\n", m.cpu, m.cores, m.memory, m.kernel, m.goVer)
	p("- Run: %s, %s; CPU busy %s of the machine (steal %s): kube-apiserver, etcd, the controller, ramjetd and this program share it.\n",
		res.start.Format("2006-01-02 15:04 MST"), round(end.Sub(res.start)), busy, steal)
	p("- `ramjet-ingress run` with --debounce %s%s; lone changes are %s apart (after the previous answer), back-to-back ones are written as soon as the previous one answered. ramjetd is asked every %s with the new Host until the right backend answers. Each route is an Ingress with one host and path `/` to one of %d Services.\n\n",
		o.debounce, map[bool]string{true: " (its default)", false: ""}[!slices.Contains(o.controllerArgs, "--debounce")],
		o.gap, o.poll, services)

	p("## Write to first correct answer\n\n")
	p("| routes | change | n | p50 | p95 | max | goal (p50) |\n|---:|---|---:|---:|---:|---:|---|\n")
	for _, s := range res.sizes {
		for _, ser := range s.series {
			g := "—"
			if lat := latencies(ser.samples); ser.lone && goal(s.routes) > 0 {
				met := len(lat) > 0 && percentile(lat, 0.5) < goal(s.routes) && ser.failed == 0
				g = fmt.Sprintf("< %s: %s", ms(goal(s.routes)), verdict(met))
			}
			p("| %d | %s | %s | %s | %s |\n", s.routes, ser.name, count(ser), spread(ser.samples), g)
		}
	}

	p("\n## Where the time goes (medians of the changes above, from the controller's debug log)\n\n")
	p("*API call*: the write's round trip. *To rebuild*: write start to the rebuild's start (API call, watch, wait for the debounce window). ")
	p("*Structure*: files, ramjet.yaml and ramjetd's reload. *After*: the last phase's end to the answer seen (polling granularity; the log's times are to the millisecond).\n\n")
	p("| routes | change | matched | API call | to rebuild | snapshot | translate | structure | members | after |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range res.sizes {
		all := append([]*series{}, s.series...)
		for i := range s.rollouts {
			all = append(all, &s.rollouts[i].series)
		}
		for _, ser := range all {
			parts, n := breakdown(ser, s.rebuilds)
			p("| %d | %s | %d/%d |", s.routes, ser.name, n, len(ser.samples))
			for _, part := range parts {
				p(" %s |", pct(part, 0.5))
			}
			p("\n")
		}
	}

	p("\n## Rollout: %d endpoints replaced one at a time (EndpointSlice updated %d times)\n\n", o.endpoints, o.endpoints)
	p("Member update latency: write start to ramjetd's admin API listing the new member instead of the old one. Goal: no reload.\n\n")
	p("| routes | pacing | n | ramjetd reloads (generation) | controller rebuilds (reloading) | pools sent | p50 | p95 | max | goal |\n|---:|---|---:|---|---:|---:|---:|---:|---:|---|\n")
	for _, s := range res.sizes {
		for _, ro := range s.rollouts {
			pacing := "back to back"
			if ro.lone {
				pacing = "lone (" + o.gap.String() + " apart)"
			}
			reloads := int(ro.genAfter) - int(ro.genBefore)
			p("| %d | %s | %s | %d (%d → %d) | %d (%d) | %.0f | %s | %s |\n", s.routes, pacing, count(&ro.series),
				reloads, ro.genBefore, ro.genAfter, ro.rebuilds, ro.reloads, ro.memberPUTs, spread(ro.samples), verdict(reloads == 0 && ro.reloads == 0))
		}
	}

	p("\n## Rebuilds while measuring (every rebuild of the series and rollouts)\n\n")
	p("Phases from the controller's log (p50 / max); the publish latency is its histogram `%s` (change seen to published: debounce wait and rebuild).\n\n", publishLatency)
	p("| routes | rebuilds | snapshot | translate | structure (reloading ones) | members | whole rebuild | publish latency: n, mean, p50, p95 bucket |\n|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range res.sizes {
		var snap, trans, structure, mem, total []time.Duration
		for _, r := range s.rebuilds {
			snap, trans, mem, total = append(snap, r.Snapshot), append(trans, r.Translate), append(mem, r.Members), append(total, r.total())
			if r.Reloaded {
				structure = append(structure, r.Structure)
			}
		}
		h := s.publish
		p("| %d | %d | %s | %s | %s | %s | %s | %.0f, %s, %s, %s |\n", s.routes, len(s.rebuilds), pmax(snap), pmax(trans), pmax(structure), pmax(mem), pmax(total),
			h.count, ms(h.mean()), h.quantile(0.5), h.quantile(0.95))
	}

	p("\n## Parts of a structural publication, timed one by one on the last ramjet.yaml (medians of %d)\n\n", costRuns)
	p("*Render*: `publish.Marshal` (JSON, which is YAML) in this program, what the publisher does when the structure digest changed. ")
	p("*Decode* and *validate*: `config.Decode` and `Validate`, ramjetd's first steps on a reload. *Reload*: `POST /v1/reload` of the same file, timed by the admin client (read, decode, validate, compile, swap).\n\n")
	p("| routes | ramjet.yaml | render | decode | validate | ramjetd reload |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range res.sizes {
		c := s.costs
		if c.err != nil {
			p("| %d | failed: %v | | | | |\n", s.routes, c.err)
			continue
		}
		p("| %d | %.0f KiB | %s | %s | %s | %s |\n", s.routes, float64(c.fileBytes)/1024, ms(c.render), ms(c.decode), ms(c.validate), ms(c.reload))
	}

	if len(res.steps) > 0 {
		p("\n## The steps of a structural rebuild without a cluster (Go benchmarks, after the cluster stopped)\n\n")
		p("The same routes in one process: `go test -run '^$' -bench Rebuild -benchmem ./test/bench/propagation` runs them alone.\n\n")
		p("| routes | step | time/op | allocated/op | allocations/op |\n|---:|---|---:|---:|---:|\n")
		for _, s := range res.steps {
			p("| %d | %s | %s | %.1f MiB | %d |\n", s.routes, s.name, ms(time.Duration(s.NsPerOp())), float64(s.AllocedBytesPerOp())/(1<<20), s.AllocsPerOp())
		}
	}

	p("\n## CPU during the measurements (cores, of %d)\n\n", m.cores)
	p("*This program* runs the backends and the polling; *rest* is every other process of the machine (noise: compare it between runs).\n\n")
	p("| routes |")
	for _, prog := range programs {
		p(" %s |", prog)
	}
	p(" this program | rest |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range res.sizes {
		p("| %d |", s.routes)
		for _, prog := range programs {
			p(" %.2f |", s.cpu.programs[prog])
		}
		p(" %.2f | %.2f |\n", s.cpu.self, s.cpu.rest)
	}

	p("\n## Memory (resident, MiB: now / peak), after the measurements\n\n")
	p("| routes | Ingresses served (rejected) | ramjet-ingress | ramjetd | kube-apiserver | etcd |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range res.sizes {
		mm := s.memory
		p("| %d | %d (%d) | %s | %s | %s | %s |\n", s.routes, s.ingresses, s.rejected, mib(mm.controller), mib(mm.ramjetd), mib(mm.apiServer), mib(mm.etcd))
	}

	p("\n## Loading the routes (the controller running)\n\n")
	p("| routes | Ingresses created | API calls (%d at a time) | last created served after | every route checked after | rebuilds |\n|---:|---:|---:|---:|---:|---:|\n", o.workers)
	for _, s := range res.sizes {
		if l := s.load; l.created > 0 {
			p("| %d | %d | %s | %s | %s | %d |\n", s.routes, l.created, round(l.createdIn), round(l.lastServed), round(l.allServed), l.rebuildsDuringLoad)
		}
	}
	return b.String()
}

// breakdown splits the changes of a series that one rebuild served into
// API call, to rebuild, snapshot, translate, structure, members and after.
func breakdown(s *series, rebuilds []rebuild) ([7][]time.Duration, int) {
	var parts [7][]time.Duration
	n := 0
	for _, x := range s.samples {
		for _, r := range rebuilds {
			done := r.reloadDone()
			if s.channel == members {
				done = r.End
			}
			// The first rebuild that started after the write and before
			// the answer, and published on the series' channel. Its phase
			// may end after the answer (negative "after"): ramjetd serves
			// the new configuration before its reply reaches the publisher,
			// which then removes the files no longer named.
			if r.start().Before(x.write.Add(-time.Millisecond)) || r.start().After(x.answered) ||
				s.channel == structural && !r.Reloaded || s.channel == members && r.Sent == 0 {
				continue
			}
			for i, d := range []time.Duration{x.rtt, r.start().Sub(x.write), r.Snapshot, r.Translate, r.Structure, r.Members, x.answered.Sub(done)} {
				parts[i] = append(parts[i], d)
			}
			n++
			break
		}
	}
	return parts, n
}

// spread is the table cells p50, p95 and max of the samples' latencies.
func spread(samples []sample) string {
	lat := latencies(samples)
	return pct(lat, 0.5) + " | " + pct(lat, 0.95) + " | " + pct(lat, 1)
}

func verdict(met bool) string {
	if met {
		return "**met**"
	}
	return "**missed**"
}

func latencies(samples []sample) []time.Duration {
	out := make([]time.Duration, len(samples))
	for i, s := range samples {
		out[i] = s.latency
	}
	return out
}

// count is the number of changes measured, with the failed ones.
func count(s *series) string {
	if s.failed > 0 {
		return fmt.Sprintf("%d (%d failed)", len(s.samples), s.failed)
	}
	return fmt.Sprint(len(s.samples))
}

// percentile is the nearest-rank q-quantile (q 1 is the maximum).
func percentile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := max(int(math.Ceil(q*float64(len(s))))-1, 0)
	return s[i]
}

func pct(d []time.Duration, q float64) string {
	if len(d) == 0 {
		return "—"
	}
	return ms(percentile(d, q))
}

func pmax(d []time.Duration) string {
	if len(d) == 0 {
		return "—"
	}
	return pct(d, 0.5) + " / " + pct(d, 1)
}

// ms writes a duration in milliseconds: one decimal below 10 ms.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }

func mib(kb [2]int) string {
	if kb[0] < 0 {
		return "?"
	}
	return fmt.Sprintf("%d / %d", kb[0]/1024, kb[1]/1024)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
