// Command passthrough measures ramjetd's ssl-passthrough (TLS connections
// spliced undecrypted by the server name of their ClientHello) side by side
// with nginx's stream proxy choosing the member with ssl_preread, in the
// same run, on loopback: the proxy alone on CPU 0, this program (the
// clients and the member) on CPU 1. It prints a Markdown report and writes
// it to -out. test/bench/passthrough.sh builds ramjetd and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// options are the flags.
type options struct {
	ramjetd          string
	duration, warmup time.Duration
	reps, conns      int
	cells            string
	out              string
}

func main() {
	var o options
	flag.StringVar(&o.ramjetd, "ramjetd", ".cache/bench/ramjetd", "the ramjetd binary")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each pass")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured time before each pass")
	flag.IntVar(&o.reps, "reps", 3, "repetitions of each pass, the proxies interleaved")
	flag.IntVar(&o.conns, "conns", 8, "concurrent client connections")
	flag.StringVar(&o.cells, "cells", "download,upload,connect", "the cells, comma-separated: "+strings.Join(cellNames(), ", "))
	flag.StringVar(&o.out, "out", "docs/benchmarks-passthrough.md", "the report's file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "passthrough:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	cells, err := pickCells(o.cells)
	if err != nil {
		return err
	}
	hello, err := clientHello(serverName)
	if err != nil {
		return err
	}
	m, err := startMember(len(hello))
	if err != nil {
		return err
	}
	defer m.close()
	dir, err := os.MkdirTemp("", "passthrough-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	started := time.Now()
	all := contenders(o.ramjetd)
	results := map[string]map[string][]pass{} // cell, proxy
	for _, c := range cells {
		results[c.name] = map[string][]pass{}
	}
	for rep := range o.reps {
		for _, ct := range all {
			passes, err := measureProxy(o, ct, filepath.Join(dir, fmt.Sprintf("%s-%d", ct.name, rep)), m, hello, cells)
			if err != nil {
				return fmt.Errorf("%s, repetition %d: %w", ct.name, rep+1, err)
			}
			for name, p := range passes {
				results[name][ct.name] = append(results[name][ct.name], p)
			}
			fmt.Fprintf(os.Stderr, "%s repetition %d done\n", ct.name, rep+1)
		}
	}
	r := report{opts: o, cells: cells, results: results, started: started, took: time.Since(started), machine: describeMachine(o.ramjetd)}
	text := r.markdown()
	fmt.Print(text)
	if o.out == "" {
		return nil
	}
	return os.WriteFile(o.out, []byte(text), 0o644)
}

// measureProxy starts a contender afresh, checks that it splices, and
// measures every cell on it.
func measureProxy(o options, ct contender, dir string, m *member, hello []byte, cells []cell) (map[string]pass, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p, err := ct.start(dir, listen, m.addr())
	if err != nil {
		return nil, fmt.Errorf("starting: %w", err)
	}
	defer p.stop()
	if err := checkSplice(listen, hello); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	out := map[string]pass{}
	for _, c := range cells {
		ps, err := measure(o, c, p, listen, m, hello)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		out[c.name] = ps
	}
	return out, nil
}

// cell is one kind of load.
type cell struct {
	name, title string
	cmd         byte
	unit        string // of the work: MiB or connections
	perUnit     string // of the CPU cost: "ms per GiB" or "µs per connection"
}

var allCells = []cell{
	{name: "download", title: "download (member to client)", cmd: cmdDownload, unit: "MiB/s", perUnit: "ms per GiB"},
	{name: "upload", title: "upload (client to member)", cmd: cmdUpload, unit: "MiB/s", perUnit: "ms per GiB"},
	{name: "connect", title: "new connection, 1 byte answered", cmd: cmdConnect, unit: "connections/s", perUnit: "µs per connection"},
}

func cellNames() []string {
	var out []string
	for _, c := range allCells {
		out = append(out, c.name)
	}
	return out
}

func pickCells(list string) ([]cell, error) {
	var out []cell
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, c := range allCells {
			if c.name == name {
				out, found = append(out, c), true
			}
		}
		if !found {
			return nil, fmt.Errorf("-cells: no cell %q (there are %s)", name, strings.Join(cellNames(), ", "))
		}
	}
	return out, nil
}

// pass is what one measured pass of a cell on a proxy gave.
type pass struct {
	rate       float64       // work per second (MiB or connections)
	cost       float64       // proxy CPU per unit of cost (ms per GiB, µs per connection)
	coreUse    float64       // the proxy's CPU over the wall time, in cores
	background float64       // the machine's busy time less the proxy and this program, in cores
	errors     int64         // failed connections before the end
	firstError string        // the first of them
	wall       time.Duration // the measured time
}

// measure runs one pass: warm-up, then the measured time, reading the
// work done and the CPU used at both ends.
func measure(o options, c cell, p *proxy, listen string, m *member, hello []byte) (pass, error) {
	start := time.Now()
	l := startLoad(listen, hello, c.cmd, o.conns, start.Add(o.warmup+o.duration))
	time.Sleep(o.warmup)
	w0, cpu0, self0, busy0, err := snapshot(c, l, m, p)
	if err != nil {
		return pass{}, err
	}
	t0 := time.Now()
	time.Sleep(time.Until(start.Add(o.warmup + o.duration)))
	w1, cpu1, self1, busy1, err := snapshot(c, l, m, p)
	if err != nil {
		return pass{}, err
	}
	wall := time.Since(t0)
	l.wait()
	work := float64(w1 - w0)
	cpu := cpu1 - cpu0
	ps := pass{
		coreUse:    cpu.Seconds() / wall.Seconds(),
		background: max(0, (busy1-busy0-cpu-(self1-self0)).Seconds()/wall.Seconds()),
		errors:     l.errs.Load(),
		wall:       wall,
	}
	if f := l.first.Load(); f != nil {
		ps.firstError = *f
	}
	switch c.cmd {
	case cmdConnect:
		ps.rate = work / wall.Seconds()
		if work > 0 {
			ps.cost = float64(cpu.Microseconds()) / work
		}
	default:
		ps.rate = work / (1 << 20) / wall.Seconds()
		if work > 0 {
			ps.cost = float64(cpu.Milliseconds()) / (work / (1 << 30))
		}
	}
	if work == 0 {
		return ps, fmt.Errorf("no work done (%d errors, the first: %s)", ps.errors, ps.firstError)
	}
	return ps, nil
}

// snapshot reads the work done so far (bytes or connections), the proxy's
// CPU time, this program's and the machine's busy time.
func snapshot(c cell, l *load, m *member, p *proxy) (work int64, cpu, self, all time.Duration, err error) {
	work = l.done.Load()
	if c.cmd == cmdUpload {
		work = m.received.Load()
	}
	if cpu, err = cpuOf(p.pid()); err != nil {
		return
	}
	if self, err = ownCPU(); err != nil {
		return
	}
	all, err = busy()
	return
}
