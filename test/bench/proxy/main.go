// Command proxy measures ramjetd side by side with nginx and HAProxy on
// two cores, following the protocol of the performance reference (§4.2):
// the proxy under test alone on CPU 0 with one worker, the load generator
// and an nginx backend serving static files on CPU 1, loopback only.
//
// For every cell (plain HTTP and TLS, 1 KiB and 100 KiB keep-alive, a new
// TLS connection per request, HTTP/2) and every repetition it starts each
// proxy afresh, in turn (ramjetd, nginx, HAProxy, then again), checks
// that it answers 200 with the backend's file, warms it up and runs two
// passes: full load (wrk, or h2load for HTTP/2 and new connections), for
// requests per second and CPU per request, then a fixed rate every
// proxy sustains (h2load), for latency and CPU per request at equal load.
// Around each pass it reads /proc: the CPU time and peak resident set of
// the proxy's processes, and the machine's CPU time, so that work by
// anything else shows as background.
//
// It writes a Markdown report and an SVG chart into -out and prints the
// report. Run it as root, pinned to CPU 1, from the module root:
// test/bench/proxy.sh installs the tools, builds ramjetd and does that.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	ramjetd                        string
	duration, warmup, rateDuration time.Duration
	reps, conns                    int
	out                            string
	cells                          []cell
	// controller is the report of test/bench/controller.sh to include,
	// "" for none.
	controller string
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.ramjetd, "ramjetd", ".cache/bench/ramjetd", "the ramjetd binary")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measurement of the full-load pass (whole seconds)")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "full load before it, not measured (whole seconds)")
	fs.DurationVar(&o.rateDuration, "rate-duration", 5*time.Second, "measurement of the fixed-rate pass (whole seconds)")
	fs.IntVar(&o.reps, "reps", 3, "repetitions, interleaved: ramjetd, nginx, HAProxy, ramjetd, ...")
	fs.IntVar(&o.conns, "conns", 64, "connections of wrk (HTTP/2: streams) at full load; a multiple of 8")
	fs.StringVar(&o.out, "out", "docs", "folder for benchmarks.md and benchmarks.svg")
	fs.StringVar(&o.controller, "controller", "", "include this report of test/bench/controller.sh (make bench writes one first)")
	ids := fs.String("cells", "", "comma-separated cells to run (default all): "+cellIDs())
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, d := range []time.Duration{o.duration, o.warmup, o.rateDuration} {
		if d < time.Second || d%time.Second != 0 {
			return o, errors.New("-duration, -warmup and -rate-duration must be whole seconds, at least 1s")
		}
	}
	if o.reps < 1 || o.conns < h2Streams || o.conns%h2Streams != 0 {
		return o, fmt.Errorf("-reps must be at least 1, -conns a multiple of %d", h2Streams)
	}
	o.cells = allCells
	if *ids != "" {
		o.cells = nil
		for id := range strings.SplitSeq(*ids, ",") {
			i := slices.IndexFunc(allCells, func(c cell) bool { return c.id == id })
			if i < 0 {
				return o, fmt.Errorf("-cells: no cell %q (cells: %s)", id, cellIDs())
			}
			o.cells = append(o.cells, allCells[i])
		}
	}
	return o, nil
}

// cellIDs lists the cells for -cells.
func cellIDs() string {
	var ids []string
	for _, c := range allCells {
		ids = append(ids, c.id)
	}
	return strings.Join(ids, ",")
}

// run sets up the run folder and the backend, measures every cell and
// writes the report.
func run(ctx context.Context, opts options) error {
	if os.Geteuid() != 0 {
		return errors.New("run as root (test/bench/proxy.sh): the proxies need many descriptors and pinned CPUs")
	}
	for _, tool := range []string{"taskset", "nginx", "haproxy", "wrk", "h2load", opts.ramjetd} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found (test/bench/proxy.sh installs what is missing)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "ramjet-bench-")
	if err != nil {
		return err
	}
	// nginx's workers run as nobody: they may cross the folder to the
	// files, but not list it.
	if err := os.Chmod(dir, 0o711); err != nil {
		return err
	}
	b, err := setup(dir, opts)
	if err != nil {
		return fmt.Errorf("%w (files in %s)", err, dir)
	}
	defer b.meter.backend.stop()
	facts := readMachine()
	start := time.Now()
	before := readMachineCPU()
	results, err := b.measure(ctx)
	if err != nil {
		return fmt.Errorf("%w (files in %s)", err, dir)
	}
	report := reportData{
		opts: opts, facts: facts, names: contenderNames(), cells: results,
		start: start, end: time.Now(), cpu: readMachineCPU().sub(before),
	}
	if opts.controller != "" {
		data, err := os.ReadFile(opts.controller)
		if err != nil {
			return fmt.Errorf("-controller: %w", err)
		}
		report.controller = string(data)
	}
	if err := report.write(opts.out); err != nil {
		return err
	}
	fmt.Print(report.markdown())
	return os.RemoveAll(dir)
}

// setup writes the certificate and the backend's files into dir and
// starts the backend on CPU 1.
func setup(dir string, opts options) (*bench, error) {
	b := &bench{opts: opts, dir: dir}
	var err error
	if b.cert, err = writeCert(dir); err != nil {
		return nil, err
	}
	docroot := filepath.Join(dir, "www")
	if b.files, err = writeDocroot(docroot); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	tlsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	b.backend = configData{Dir: dir, Docroot: docroot, Backend: port, BackendTLS: tlsPort, Cert: b.cert.cert, Key: b.cert.key, Bundle: b.cert.bundle}
	config, err := writeConfig(backendConfig, b.backend, "backend.conf")
	if err != nil {
		return nil, err
	}
	p, err := startProcess("backend", 1, []string{"nginx", "-c", config, "-e", dir + "/backend.err"}, nil, filepath.Join(dir, "backend.log"))
	if err != nil {
		return nil, err
	}
	if err := p.waitPort(port, 10*time.Second); err != nil {
		p.stop()
		return nil, err
	}
	b.meter = &meter{
		proc:    os.DirFS("/proc"),
		backend: p,
		status:  fmt.Sprintf("http://127.0.0.1:%d/status", port),
		client:  &http.Client{Timeout: 5 * time.Second},
	}
	return b, nil
}

// measure runs every cell, repetitions interleaved between contenders.
func (b *bench) measure(ctx context.Context) ([]cellResult, error) {
	ks := contenders(b.opts.ramjetd)
	perRun := b.opts.warmup + b.opts.duration + b.opts.rateDuration + time.Second
	var total time.Duration
	for _, c := range b.opts.cells {
		for _, k := range ks {
			if k.runs(c) {
				total += time.Duration(b.opts.reps) * perRun
			}
		}
	}
	fmt.Fprintf(os.Stderr, "proxy: %d cells × %d repetitions × %d proxies, about %s (files in %s)\n",
		len(b.opts.cells), b.opts.reps, len(ks), total.Round(time.Minute), b.dir)
	var results []cellResult
	for _, c := range b.opts.cells {
		res := cellResult{cell: c, runs: make([][]trial, len(ks))}
		for rep := range b.opts.reps {
			for i, k := range ks {
				if !k.runs(c) {
					continue // its column says "—"
				}
				r, err := b.runOne(ctx, k, c)
				if err != nil {
					return nil, fmt.Errorf("%s, %s, repetition %d: %w", c.name, k.name, rep+1, err)
				}
				res.runs[i] = append(res.runs[i], r)
				fmt.Fprintf(os.Stderr, "%-40s %d/%d %-8s %s\n", c.name, rep+1, b.opts.reps, k.name, r.progress())
			}
		}
		results = append(results, res)
	}
	return results, nil
}
