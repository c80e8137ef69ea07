package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Validity thresholds of the protocol (performance reference §4.2).
const (
	minUtil       = 0.95 // proxy core use below which throughput is the client's
	maxBackground = 0.15 // cores used by others above which a pass is flagged
)

// cellResult is every repetition of one cell.
type cellResult struct {
	cell cell
	runs [][]trial // [contender][repetition]
}

// reportData is what the report is written from. The first contender is
// ramjetd, the one every ratio is about.
type reportData struct {
	opts       options
	facts      facts
	names      []string
	cells      []cellResult
	start, end time.Time
	cpu        machineCPU // of the whole run
	controller string     // the controller's report (-controller), or ""
}

// metric is one table of the report.
type metric struct {
	title, intro string
	value        func(trial) float64
	format       func(float64) string
	note         func(cellResult) string // nil: no note column
}

// metrics are the report's tables, in order.
func metrics() []metric {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return []metric{
		{
			title: "Requests per second at full load",
			intro: "Higher is better; a ratio above 1 means ramjetd served more. Valid as a throughput claim only where the proxy used ≥ 0.95 of its core.",
			value: func(r trial) float64 { return r.full.rps }, format: number, note: boundNote,
		},
		{
			title: "Proxy CPU per request at full load (µs)",
			intro: "Lower is better; a ratio above 1 means ramjetd spent more CPU per request. Meaningful even where the client was the bottleneck.",
			value: func(r trial) float64 { return r.full.cpuPerRequest() }, format: number,
		},
		{
			title: "Proxy CPU per request at the fixed rate (µs)",
			intro: "The same load offered to every proxy (see the rate column of the validity table). Lower is better.",
			value: func(r trial) float64 { return r.fixed.cpuPerRequest() }, format: number,
		},
		{
			title: "Latency p50 at the fixed rate (ms)",
			intro: "From h2load's per-request log; for new connections, from the request to the end of the answer (the handshake before it is not included: see the time to first byte below). Lower is better.",
			value: func(r trial) float64 { return ms(percentile(r.fixed.latency, 0.5)) }, format: number,
		},
		{
			title: "Latency p99 at the fixed rate (ms)",
			intro: "Lower is better.",
			value: func(r trial) float64 { return ms(percentile(r.fixed.latency, 0.99)) }, format: number,
		},
		{
			title: "Peak resident memory of the proxy (MiB)",
			intro: "VmHWM of the proxy's processes, summed, after both passes of a repetition (each repetition starts the proxy afresh). Lower is better.",
			value: func(r trial) float64 { return float64(r.hwmKiB) / 1024 }, format: number,
		},
	}
}

// markdown is the report.
func (rd *reportData) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f := rd.facts
	p("# ramjetd, nginx and HAProxy side by side\n\n")
	p("Written by `make bench` (`test/bench/proxy.sh`, the program `test/bench/proxy`) on %s in %s. Ratios are ramjetd's median divided by the other proxy's.\n\n",
		rd.start.Format("2006-01-02 15:04 MST"), rd.end.Sub(rd.start).Round(time.Second))
	p("## Machine and versions\n\n")
	p("- %d × %s, %s memory, Linux %s.\n", f.cores, f.cpu, f.memory, f.kernel)
	if rd.cpu.total > 0 {
		p("- During the whole run the machine was %.0f%% busy (the benchmark included; steal %.1f%%).\n",
			100*rd.cpu.busy.Seconds()/rd.cpu.total.Seconds(), 100*rd.cpu.steal.Seconds()/rd.cpu.total.Seconds())
	}
	noisy, passes := rd.noisyPasses()
	p("- Background above %.2f cores (another program at work) in %d of %d passes; they are flagged in the validity table.\n", maxBackground, noisy, passes)
	p("- ramjetd runs with GOMAXPROCS=1, GOGC %s.\n\n| software | version |\n|---|---|\n", f.gogc)
	for _, v := range f.versions {
		p("| %s | %s |\n", v[0], mdEscape(v[1]))
	}
	rd.protocol(&b)
	for _, m := range metrics() {
		rd.table(&b, m)
	}
	p("## CPU per request, chart\n\n![Proxy CPU µs per request at full load, per cell](benchmarks.svg)\n\n")
	rd.validity(&b)
	if rd.controller != "" {
		b.WriteString("\n" + demoteHeadings(rd.controller))
	}
	return b.String()
}

// demoteHeadings puts a Markdown report under this one: each of its
// headings one level lower ("# Controller …" becomes a section).
func demoteHeadings(md string) string {
	lines := strings.Split(md, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "#") {
			lines[i] = "#" + line
		}
	}
	return strings.Join(lines, "\n")
}

// protocol describes how the numbers were taken.
func (rd *reportData) protocol(b *strings.Builder) {
	o := rd.opts
	fmt.Fprintf(b, `
## Protocol

- **Topology** (performance reference §4.2): the proxy under test alone on CPU 0 (taskset; ramjetd GOMAXPROCS=1, nginx worker_processes 1, HAProxy nbthread 1); the load generator and the backend on CPU 1. The backend is nginx with one worker serving static files of 1 KiB and 100 KiB (sendfile, access log off, keepalive_requests 1000000). Loopback (127.0.0.1) only.
- **Same work for each proxy**: one route to one backend member over kept-alive HTTP/1.1 connections (nginx upstream keepalive 128 with proxy_http_version 1.1 and an empty Connection header; HAProxy http-reuse always; ramjetd's pool, which keeps up to 320 idle connections per member); no access logs; the forwarding headers ramjetd always sets (X-Forwarded-For, -Host, -Proto, -Port, X-Scheme, X-Real-IP, X-Request-ID) set by nginx and HAProxy too; bodies streamed through 32 KiB buffers (nginx proxy_buffering off with proxy_buffer_size 32k, the streaming of ingress-nginx's default; HAProxy tune.bufsize 32768; ramjetd copies with 32 KiB buffers). TLS 1.3 with X25519 and one ECDSA P-256 certificate generated for the run; session tickets as each proxy has them by default.
- **Full-load pass**: wrk -t1 -c%[1]d for HTTP/1.1 keep-alive; h2load -c%[2]d -m%[3]d for HTTP/2; for a new connection per request, h2load offering %[4]d connections a second with one request each. wrk resumes TLS sessions when it reconnects (measured against nginx: 2239 of 2243 connections resumed), so its Connection: close would measure resumptions; h2load makes a full handshake on every connection. Each proxy is started afresh and checked (200 with the backend's exact file, TLS 1.3, HTTP/2 where asked), then warmed up for %[5]s and measured for %[6]s; %[7]d repetitions interleaved (ramjetd, nginx, HAProxy, ramjetd, ...); medians with the min–max of the repetitions.
- **Fixed-rate pass**, right after on the same process, %[8]s: h2load --rps on %[9]d connections (HTTP/1.1, or HTTP/2 with up to %[3]d streams each), or -r for new connections (spread evenly: one every 2 ms at 500/s), at a rate below what every proxy sustains. h2load fires each connection's requests on its own timer, so requests arrive in bursts of up to %[9]d: the latencies include that queueing, the same for every proxy. wrk is closed-loop (its latency at full load hides queueing: coordinated omission), so latency is taken here only, from h2load's per-request log.
- **Measures**: CPU per request is the utime+stime of the proxy's processes (/proc/<pid>/stat; nginx's master and worker summed) over the pass, divided by the answers; core use is that CPU time over the pass's wall time. Background is /proc/stat's busy time less the proxy, the backend, the load generator and this program, in cores; it includes kernel work charged to no process.

`, o.conns, o.conns/h2Streams, h2Streams, newConnOffer, o.warmup, o.duration, o.reps, o.rateDuration, rateClients)
	if slices.ContainsFunc(rd.cells, func(cr cellResult) bool { return cr.cell.auth != noAuth }) {
		b.WriteString(authProtocol)
	}
	if slices.ContainsFunc(rd.cells, func(cr cellResult) bool { return cr.cell.passthrough }) {
		b.WriteString(passthroughProtocol)
	}
}

// passthroughProtocol describes the cells with ssl-passthrough.
const passthroughProtocol = `- **ssl-passthrough** (the cells "ssl-passthrough"): the proxy does not terminate TLS; it reads the ClientHello's server name (localhost, which the client sends as SNI) and splices the connection undecrypted to the backend's own HTTPS port (the same nginx on CPU 1, with the same TLS settings and certificate), which the client's TLS reaches. ramjetd: an application for localhost with a passthrough to a pool of that port; nginx: a stream server with ssl_preread on and proxy_pass through a map of $ssl_preread_server_name (ingress-nginx itself does this in its Go controller process, not in nginx); HAProxy: a mode tcp frontend that waits for the ClientHello (req_ssl_hello_type 1) and picks the backend by req_ssl_sni. The TLS work is the backend's, so these cells weigh the splice: the proxy's CPU per request is the measure.

`

// authProtocol describes the cells with external authentication.
const authProtocol = `- **External authentication** (the cells "external auth"): the route asks an authentication service about every request before proxying it, as ingress-nginx's auth-url. The service is the backend's location /auth (the same nginx on CPU 1 for every proxy), which answers 200 to the load's Authorization: Bearer bench and 401 to anything else; each proxy is checked for that 401 before measuring. ramjetd: an external_auth policy with keepalive (128 connections of up to a million requests); nginx: auth_request to an internal location built like ingress-nginx's (no body, X-Original-URL, X-Original-Method, X-Auth-Request-Redirect, X-Sent-From) proxying to the backend's upstream (keepalive 128, keepalive_requests 1000000). ingress-nginx's own default is a new connection per subrequest (auth-keepalive 0); here both keep them. "cached": the answers are remembered 5 minutes by the Authorization header (ramjetd's external_auth cache, key header:Authorization; nginx proxy_cache on the auth location with proxy_cache_key $http_authorization, as ingress-nginx's auth-cache-key), so after the first request the service is not asked. HAProxy has no equivalent of auth_request (it takes a Lua or SPOE program of one's own): it is left out of these cells ("—").

`

// table writes one metric for every cell: each contender's median with
// its spread, and ramjetd's ratios to the others.
func (rd *reportData) table(b *strings.Builder, m metric) {
	fmt.Fprintf(b, "## %s\n\n%s\n\n| cell |", m.title, m.intro)
	for _, n := range rd.names {
		fmt.Fprintf(b, " %s |", n)
	}
	for _, n := range rd.names[1:] {
		fmt.Fprintf(b, " %s ÷ %s |", rd.names[0], n)
	}
	align := strings.Repeat("---:|", 2*len(rd.names)-1)
	if m.note != nil {
		b.WriteString(" note |")
		align += "---|"
	}
	fmt.Fprintf(b, "\n|---|%s\n", align)
	for _, cr := range rd.cells {
		fmt.Fprintf(b, "| %s |", cr.cell.name)
		medians := make([]float64, len(cr.runs))
		for i := range cr.runs {
			s := cr.spread(i, m.value)
			medians[i] = s.median
			fmt.Fprintf(b, " %s |", formatSpread(s, m.format))
		}
		for _, other := range medians[1:] {
			fmt.Fprintf(b, " %s |", times(ratio(medians[0], other)))
		}
		if m.note != nil {
			fmt.Fprintf(b, " %s |", m.note(cr))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// validity writes, per cell and contender, what decides whether the
// numbers above can be trusted.
func (rd *reportData) validity(b *strings.Builder) {
	b.WriteString("## Validity\n\n")
	fmt.Fprintf(b, "Core use: of the proxy, median (min–max) of the full-load passes; below %.2f the client was the bottleneck. CPU 1 use: of the load generator and the backend together, median; near 1 they were the bottleneck. Background: the highest of all passes, in cores (flagged above %.2f). Non-2xx and errors: summed over all passes (h2load's requests cut when a timed run stops are not errors). Backend connections: opened during a full-load pass (median), beyond the kept-alive ones. Rate held: the lowest fixed-rate pass's answers per second over the offered rate. Time to 1st byte: h2load's mean for the new connections of the fixed-rate pass, from the start of the TCP connection to the first byte of the answer (handshake included). TLS: as h2load negotiated it.\n\n", minUtil, maxBackground)
	b.WriteString("| cell | proxy | core use | CPU 1 use | background | non-2xx | errors | backend connections | fixed rate: offered, held | time to 1st byte (new connections) | TLS |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, cr := range rd.cells {
		for i, name := range rd.names {
			runs := cr.runs[i]
			if len(runs) == 0 {
				continue // a contender without the cell's feature
			}
			var bg, held float64 = 0, math.Inf(1)
			var non2xx, errs int64
			for _, r := range runs {
				bg = max(bg, r.full.background, r.fixed.background)
				held = min(held, r.fixed.rps/float64(cr.cell.offered()))
				non2xx += r.full.non2xx + r.fixed.non2xx
				errs += r.full.errors + r.fixed.errors
			}
			util := cr.spread(i, func(r trial) float64 { return r.full.util() })
			client := cr.spread(i, func(r trial) float64 { return r.full.clientUtil() })
			ttfb := "—"
			if cr.cell.mode == newConn {
				ttfb = number(cr.spread(i, func(r trial) float64 { return float64(r.fixed.ttfb) / float64(time.Millisecond) }).median) + " ms"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d/s, %s | %s | %s |\n",
				cr.cell.name, name, formatSpread(util, fixed2), fixed2(client.median), warn(fixed2(bg), bg > maxBackground),
				warn(strconv.FormatInt(non2xx, 10), non2xx > 0), warn(strconv.FormatInt(errs, 10), errs > 0),
				whole(cr.spread(i, func(r trial) float64 { return float64(r.full.upstream) }).median),
				cr.cell.offered(), warn(fixed2(held), held < 0.97), ttfb, tlsOf(runs))
		}
	}
	b.WriteString("\n")
}

// noisyPasses counts the passes whose background was above
// maxBackground, and all passes.
func (rd *reportData) noisyPasses() (noisy, passes int) {
	for _, cr := range rd.cells {
		for _, runs := range cr.runs {
			for _, r := range runs {
				for _, s := range []sample{r.full, r.fixed} {
					passes++
					if s.background > maxBackground {
						noisy++
					}
				}
			}
		}
	}
	return noisy, passes
}

// spread summarizes value over the repetitions of contender i.
func (cr cellResult) spread(i int, value func(trial) float64) spread {
	xs := make([]float64, len(cr.runs[i]))
	for j, r := range cr.runs[i] {
		xs[j] = value(r)
	}
	return summarize(xs)
}

// boundNote says which contenders were held back by the client in a cell.
func boundNote(cr cellResult) string {
	var bound []string
	for i := range cr.runs {
		if s := cr.spread(i, func(r trial) float64 { return r.full.util() }); s.median < minUtil {
			bound = append(bound, fmt.Sprintf("%s %.2f", contenderNames()[i], s.median))
		}
	}
	if len(bound) == 0 {
		return "proxy-bound"
	}
	return "client-bound (core use " + strings.Join(bound, ", ") + "): compare CPU/request"
}

// write writes the report and the chart into dir.
func (rd *reportData) write(dir string) error {
	c := chart{title: "Proxy CPU per request at full load (lower is better)", unit: "µs per request", series: rd.names}
	for _, cr := range rd.cells {
		c.groups = append(c.groups, cr.cell.name)
		vs := make([]float64, len(cr.runs))
		for i := range cr.runs {
			vs[i] = cr.spread(i, func(r trial) float64 { return r.full.cpuPerRequest() }).median
		}
		c.values = append(c.values, vs)
	}
	var svg strings.Builder
	if err := c.write(&svg); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.svg"), []byte(svg.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(rd.markdown()), 0o644)
}
