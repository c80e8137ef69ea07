package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// metrics reads the controller's /metrics as a map from "name{labels}" to
// value.
func (b *bench) metrics(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.ramjet.Controller+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the controller's metrics: %w", err)
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// parseMetrics reads Prometheus' text format, without the comments.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	m := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// histogram is ramjet_ingress_publish_latency_seconds: cumulative counts
// by upper bound.
type histogram struct {
	sum, count float64
	buckets    map[float64]float64
}

const publishLatency = "ramjet_ingress_publish_latency_seconds"

func publishHistogram(m map[string]float64) histogram {
	h := histogram{sum: m[publishLatency+"_sum"], count: m[publishLatency+"_count"], buckets: map[float64]float64{}}
	for k, v := range m {
		le, ok := strings.CutPrefix(k, publishLatency+`_bucket{le="`)
		if !ok {
			continue
		}
		bound, err := strconv.ParseFloat(strings.TrimSuffix(le, `"}`), 64)
		if err == nil {
			h.buckets[bound] = v
		}
	}
	return h
}

func (h histogram) sub(o histogram) histogram {
	d := histogram{sum: h.sum - o.sum, count: h.count - o.count, buckets: map[float64]float64{}}
	for k, v := range h.buckets {
		d.buckets[k] = v - o.buckets[k]
	}
	return d
}

// mean is the mean observation.
func (h histogram) mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(h.sum / h.count * float64(time.Second))
}

// quantile is the upper bound of the bucket holding the q-quantile.
func (h histogram) quantile(q float64) string {
	bounds := make([]float64, 0, len(h.buckets))
	for k := range h.buckets {
		bounds = append(bounds, k)
	}
	slices.Sort(bounds)
	for _, le := range bounds {
		if h.buckets[le] >= q*h.count {
			if le > 1e9 {
				return "> last bucket"
			}
			return "≤ " + round(time.Duration(le*float64(time.Second))).String()
		}
	}
	return "—"
}

// rebuild is one rebuild of the controller, from the debug line it logs
// (sources/controller: "rebuilt" with the durations of its phases). The
// log's time has millisecond precision.
type rebuild struct {
	End       time.Time     `json:"time"`
	Msg       string        `json:"msg"`
	Reloaded  bool          `json:"reloaded"`
	Sent      int           `json:"pools sent"`
	Snapshot  time.Duration `json:"snapshot"`
	Translate time.Duration `json:"translate"`
	Structure time.Duration `json:"structure"`
	Members   time.Duration `json:"members"`
}

func (r rebuild) total() time.Duration { return r.Snapshot + r.Translate + r.Structure + r.Members }
func (r rebuild) start() time.Time     { return r.End.Add(-r.total()) }

// reloadDone is when ramjetd had the new configuration (the structure
// phase ends with its reload).
func (r rebuild) reloadDone() time.Time { return r.start().Add(r.Snapshot + r.Translate + r.Structure) }

// rebuilds returns the controller's rebuilds that started in [from, to].
func (b *bench) rebuilds(from, to time.Time) []rebuild {
	var out []rebuild
	for line := range strings.SplitSeq(b.ramjet.Log("ramjet-ingress"), "\n") {
		if !strings.Contains(line, `"msg":"rebuilt"`) {
			continue
		}
		var r rebuild
		if json.Unmarshal([]byte(line), &r) != nil || r.Msg != "rebuilt" {
			continue
		}
		// The log's time is truncated to the millisecond.
		if s := r.start(); !s.Before(from.Add(-time.Millisecond)) && !s.After(to) {
			out = append(out, r)
		}
	}
	return out
}

// memory is the resident memory of the processes, in KiB: now and peak.
type memory struct {
	controller, ramjetd, apiServer, etcd [2]int
}

func (b *bench) memory() memory {
	return memory{
		controller: rss(b.proc("ramjet-ingress")),
		ramjetd:    rss(b.proc("ramjetd")),
		apiServer:  rss(b.proc("kube-apiserver")),
		etcd:       rss(b.proc("etcd")),
	}
}

// programs are the processes of the setup besides this one.
var programs = []string{"ramjet-ingress", "ramjetd", "kube-apiserver", "etcd"}

// proc returns the /proc folder of one of programs ("" when not found).
func (b *bench) proc(program string) string {
	arg := map[string]string{"ramjet-ingress": b.ramjet.Dir, "ramjetd": b.ramjet.Config}[program]
	if arg == "" {
		arg = b.cluster.Dir
	}
	return findProc(program, arg)
}

// findProc returns the /proc folder of the process running the program
// named program with an argument containing arg ("" when there is none).
func findProc(program, arg string) string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(dir + "/cmdline")
		if err != nil || len(cmdline) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if filepath.Base(args[0]) == program && slices.ContainsFunc(args[1:], func(a string) bool { return strings.Contains(a, arg) }) {
			return dir
		}
	}
	return ""
}

// rss returns the VmRSS and VmHWM of a process in KiB (-1 when unknown).
func rss(proc string) [2]int {
	found := [2]int{-1, -1}
	status, err := os.ReadFile(proc + "/status")
	if proc == "" || err != nil {
		return found
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		for i, field := range []string{"VmRSS:", "VmHWM:"} {
			if rest, ok := strings.CutPrefix(line, field); ok {
				found[i], _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			}
		}
	}
	return found
}

// cpuTicks returns the user and system time of a process, in clock ticks.
func cpuTicks(proc string) float64 {
	data, err := os.ReadFile(proc + "/stat")
	if proc == "" || err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses: state
	// is the first, utime the 12th and stime the 13th.
	_, rest, _ := strings.Cut(string(data), ") ")
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return utime + stime
}

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// usage is the CPU used during a window, in cores: by each program of the
// setup, by this program (the backends and the polling), and by the rest
// of the machine.
type usage struct {
	programs   map[string]float64
	self, rest float64
}

// cpuMark is what usage compares.
type cpuMark struct {
	at      time.Time
	machine cpuTimes
	procs   map[string]float64
}

func (b *bench) markCPU() cpuMark {
	m := cpuMark{at: time.Now(), machine: readCPU(), procs: map[string]float64{"self": cpuTicks("/proc/self")}}
	for _, p := range programs {
		m.procs[p] = cpuTicks(b.proc(p))
	}
	return m
}

func (m cpuMark) usage(end cpuMark) usage {
	ticks := end.at.Sub(m.at).Seconds() * clockTicks
	u := usage{programs: map[string]float64{}}
	if ticks <= 0 {
		return u
	}
	ours := 0.0
	for p, v := range end.procs {
		d := v - m.procs[p]
		ours += d
		if p == "self" {
			u.self = d / ticks
		} else {
			u.programs[p] = d / ticks
		}
	}
	u.rest = max(end.machine.busy-m.machine.busy-ours, 0) / ticks
	return u
}

// machine describes where the run happened.
type machine struct {
	cpu    string
	cores  int
	memory string
	kernel string
	goVer  string
}

func readMachine() machine {
	m := machine{cpu: "unknown", cores: runtime.NumCPU(), memory: "unknown", kernel: "unknown", goVer: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if kb, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(kb), " kB"))
				m.memory = fmt.Sprintf("%.1f GiB", float64(n)/(1<<20))
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(data))
	}
	return m
}

// cpuTimes are the machine's CPU times from /proc/stat, in ticks.
type cpuTimes struct{ busy, idle, steal, total float64 }

func readCPU() cpuTimes {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)[1:] // user nice system idle iowait irq softirq steal ...
	var t cpuTimes
	for i, f := range fields {
		if i >= 8 {
			break // guest times are already in user
		}
		v, _ := strconv.ParseFloat(f, 64)
		t.total += v
		switch i {
		case 3, 4:
			t.idle += v
		case 7:
			t.steal += v
		default:
			t.busy += v
		}
	}
	return t
}
