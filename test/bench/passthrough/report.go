package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// machine describes where the run took place.
type machine struct {
	cpu, kernel                  string
	cores                        int
	ramjetd, goVersion, nginxVer string
}

func describeMachine(ramjetd string) machine {
	// Not runtime.NumCPU: this program runs pinned to one core.
	m := machine{goVersion: runtime.Version(), nginxVer: version("nginx", "-v")}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.HasPrefix(line, "processor") {
				m.cores++
			}
			if name, ok := strings.CutPrefix(line, "model name"); ok && m.cpu == "" {
				m.cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(data))
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.ramjetd = "commit " + strings.TrimSpace(string(out))
	} else {
		m.ramjetd = ramjetd
	}
	return m
}

// report is the run's results.
type report struct {
	opts    options
	cells   []cell
	results map[string]map[string][]pass // cell, proxy
	machine machine
	started time.Time
	took    time.Duration
}

// proxies are the contenders' names in the report's order.
var proxies = []string{"ramjetd", "nginx"}

func (r report) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# ssl-passthrough: ramjetd and nginx's ssl_preread side by side\n\n")
	w("Written by `test/bench/passthrough.sh` (the program `test/bench/passthrough`) on %s in %s. Ratios are ramjetd's median divided by nginx's.\n\n",
		r.started.UTC().Format("2006-01-02 15:04 UTC"), r.took.Round(time.Second))
	w("## Machine and versions\n\n")
	w("- %d × %s, Linux %s.\n", r.machine.cores, r.machine.cpu, r.machine.kernel)
	w("- Background (the machine's busy time less the proxy and the load program, in cores): at most %.2f in a pass; passes above 0.15 are flagged below.\n\n", r.maxBackground())
	w("| software | version |\n|---|---|\n")
	w("| ramjetd | %s |\n| Go (builds ramjetd) | %s |\n| nginx | %s |\n\n", r.machine.ramjetd, r.machine.goVersion, r.machine.nginxVer)
	w("## Protocol\n\n")
	w("- **Topology**: the proxy under test alone on CPU 0 (taskset; ramjetd GOMAXPROCS=1, nginx worker_processes 1); this program, which runs the clients and the member, on CPU 1. Loopback (127.0.0.1) only.\n")
	w("- **Same work for each proxy**: one listener, one passthrough host (%s) whose connections go to one member. ramjetd: an application with `passthrough: {pool: member}`, as the controller renders `ssl-passthrough: \"true\"`. nginx: a `stream` server with `ssl_preread on` and a `map` of `$ssl_preread_server_name` to the member, `proxy_pass` with its default 16 KiB buffer. ingress-nginx itself does not use nginx for this: its controller process splices passthrough connections with Go's `io.Copy` (pkg/tcpproxy) in front of nginx; ssl_preread is nginx's own way to do the same work.\n", serverName)
	w("- **Load**: each connection starts with a real TLS 1.3 ClientHello asking for %s (from Go's crypto/tls), then one command byte for the member; after that the bytes are not TLS (the proxies do not look at them), so the member and the clients spend no CPU on encryption. %d concurrent connections. *download*: the member writes 64 KiB chunks until the client closes; *upload*: the clients write 64 KiB chunks, the member reads them; *connect*: a new connection each time, the member answers one byte and closes.\n", serverName, r.opts.conns)
	w("- **Passes**: each proxy started afresh for each repetition and checked (a connection spliced both ways), then every cell warmed up for %s and measured for %s; %d repetition(s) interleaved (ramjetd, nginx, ramjetd, ...); medians with the min–max of the repetitions.\n", r.opts.warmup, r.opts.duration, r.opts.reps)
	w("- **Measures**: throughput is the bytes the clients read (download) or the member read (upload) over the measured time, in MiB/s; CPU is the utime+stime of the proxy's processes (/proc/<pid>/stat; nginx's master and worker summed) over the pass, per GiB moved or per connection. Core use is that CPU time over the wall time: below 0.95, the proxy was not the bottleneck (this program on CPU 1 was), and only the CPU cost compares the proxies.\n\n")

	w("## Throughput\n\nHigher is better; a ratio above 1 means ramjetd moved more.\n\n")
	w("| cell | unit | ramjetd | nginx | ramjetd ÷ nginx | note |\n|---|---|---:|---:|---:|---|\n")
	for _, c := range r.cells {
		rates := r.values(c, func(p pass) float64 { return p.rate })
		w("| %s | %s | %s | %s | %s | %s |\n", c.title, c.unit, summary(rates["ramjetd"]), summary(rates["nginx"]), ratio(rates["ramjetd"], rates["nginx"]), r.note(c))
	}
	w("\n## Proxy CPU per unit of work\n\nLower is better; a ratio above 1 means ramjetd spent more. Meaningful even where the clients were the bottleneck.\n\n")
	w("| cell | unit | ramjetd | nginx | ramjetd ÷ nginx |\n|---|---|---:|---:|---:|\n")
	for _, c := range r.cells {
		costs := r.values(c, func(p pass) float64 { return p.cost })
		w("| %s | %s | %s | %s | %s |\n", c.title, c.perUnit, summary(costs["ramjetd"]), summary(costs["nginx"]), ratio(costs["ramjetd"], costs["nginx"]))
	}
	w("\n## Validity\n\nCore use: of the proxy, median (min–max). Background: the highest of the passes, in cores (flagged above 0.15). Errors: failed connections before the end of a pass, summed.\n\n")
	w("| cell | proxy | core use | background | errors | first error |\n|---|---|---:|---:|---:|---|\n")
	for _, c := range r.cells {
		for _, name := range proxies {
			ps := r.results[c.name][name]
			var uses []float64
			var bg float64
			var errs int64
			first := ""
			for _, p := range ps {
				uses = append(uses, p.coreUse)
				bg = max(bg, p.background)
				errs += p.errors
				if first == "" {
					first = p.firstError
				}
			}
			flag := fmt.Sprintf("%.2f", bg)
			if bg > 0.15 {
				flag = "**" + flag + " ⚠**"
			}
			if first == "" {
				first = "—"
			}
			w("| %s | %s | %s | %s | %d | %s |\n", c.title, name, summaryFixed(uses), flag, errs, strings.ReplaceAll(first, "|", "\\|"))
		}
	}
	return b.String()
}

// values gathers a measure of the cell's passes, per proxy.
func (r report) values(c cell, of func(pass) float64) map[string][]float64 {
	out := map[string][]float64{}
	for name, ps := range r.results[c.name] {
		for _, p := range ps {
			out[name] = append(out[name], of(p))
		}
	}
	return out
}

// note says when the clients, not the proxies, set the throughput.
func (r report) note(c cell) string {
	var bound []string
	for _, name := range proxies {
		uses := r.values(c, func(p pass) float64 { return p.coreUse })[name]
		if len(uses) > 0 && median(uses) < 0.95 {
			bound = append(bound, fmt.Sprintf("%s %.2f", name, median(uses)))
		}
	}
	if len(bound) == 0 {
		return ""
	}
	return "client-bound (core use " + strings.Join(bound, ", ") + "): compare CPU"
}

func (r report) maxBackground() float64 {
	var bg float64
	for _, byProxy := range r.results {
		for _, ps := range byProxy {
			for _, p := range ps {
				bg = max(bg, p.background)
			}
		}
	}
	return bg
}

// median of values (not empty).
func median(values []float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// summary is "median (min–max)" with three significant digits, or the
// median alone for one value.
func summary(values []float64) string {
	if len(values) == 0 {
		return "—"
	}
	if len(values) == 1 {
		return number(values[0])
	}
	return fmt.Sprintf("%s (%s–%s)", number(median(values)), number(slices.Min(values)), number(slices.Max(values)))
}

// summaryFixed is summary with two decimals (core use).
func summaryFixed(values []float64) string {
	if len(values) == 0 {
		return "—"
	}
	if len(values) == 1 {
		return fmt.Sprintf("%.2f", values[0])
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(values), slices.Min(values), slices.Max(values))
}

// ratio is a's median over b's, as "1.23×".
func ratio(a, b []float64) string {
	if len(a) == 0 || len(b) == 0 || median(b) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", median(a)/median(b))
}

// number writes v with three significant digits, thousands separated.
func number(v float64) string {
	switch {
	case v >= 1000:
		s := fmt.Sprintf("%.0f", v)
		var out []byte
		for i := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				out = append(out, ',')
			}
			out = append(out, s[i])
		}
		return string(out)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
