package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one pass of the load generator against one contender.
type sample struct {
	toolResult
	window     time.Duration   // the load generator's run, start to exit
	proxyCPU   time.Duration   // of the proxy's processes
	clientCPU  time.Duration   // of the load generator and the backend (CPU 1)
	background float64         // cores used by anything but the known processes
	upstream   int64           // connections the backend accepted meanwhile
	latency    []time.Duration // fixed-rate pass: each 2xx answer's time
}

// cpuPerRequest is the proxy's CPU microseconds per answer.
func (s sample) cpuPerRequest() float64 {
	if s.responses == 0 {
		return math.NaN()
	}
	return float64(s.proxyCPU.Microseconds()) / float64(s.responses)
}

// util is the share of a core the proxy used.
func (s sample) util() float64 { return s.proxyCPU.Seconds() / s.window.Seconds() }

// clientUtil is the share of a core the load generator and the backend
// used: near 1, CPU 1 was the bottleneck.
func (s sample) clientUtil() float64 { return s.clientCPU.Seconds() / s.window.Seconds() }

// meter reads the machine around a pass: the CPU time of the proxy, the
// backend, the load generator, this program and the whole machine.
type meter struct {
	proc    fs.FS // /proc
	backend *process
	status  string       // the backend's stub_status
	client  *http.Client // keeps one connection to it, so reading adds none
}

// reading is the state of the machine at one moment.
type reading struct {
	proxy, backend usage
	machine        machineCPU
	self           time.Duration
	accepts        int64
}

// read takes a reading with the proxy whose pid is proxy.
func (m *meter) read(ctx context.Context, proxy int) (reading, error) {
	var r reading
	var err error
	if r.proxy, err = treeUsage(m.proc, proxy); err != nil {
		return r, fmt.Errorf("proxy: %w", err)
	}
	if r.backend, err = treeUsage(m.proc, m.backend.pid()); err != nil {
		return r, fmt.Errorf("backend: %w", err)
	}
	stat, err := fs.ReadFile(m.proc, "stat")
	if err != nil {
		return r, err
	}
	if r.machine, err = parseMachineCPU(string(stat)); err != nil {
		return r, fmt.Errorf("/proc/stat: %w", err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return r, err
	}
	r.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	r.accepts, err = m.accepts(ctx)
	return r, err
}

// accepts is the number of connections the backend has accepted.
func (m *meter) accepts(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.status, nil)
	if err != nil {
		return 0, err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("backend status: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("backend status: %w", err)
	}
	return parseStubStatus(string(body))
}

// parseStubStatus reads the accepts count of nginx's stub_status page,
// the first number of its third line ("accepts handled requests" is the
// second).
func parseStubStatus(s string) (int64, error) {
	lines := strings.Split(s, "\n")
	if len(lines) < 3 || !strings.Contains(lines[1], "accepts") {
		return 0, fmt.Errorf("stub_status: unexpected page %q", s)
	}
	f := strings.Fields(lines[2])
	if len(f) < 3 {
		return 0, fmt.Errorf("stub_status: %q has no counts", lines[2])
	}
	return strconv.ParseInt(f[0], 10, 64)
}

// pass runs the load generator of lc on CPU 1 against the proxy whose pid
// is proxy and measures around it.
func (m *meter) pass(ctx context.Context, proxy int, lc loadCommand) (sample, error) {
	before, err := m.read(ctx, proxy)
	if err != nil {
		return sample{}, err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "taskset", append([]string{"-c", "1"}, lc.argv...)...)
	out, runErr := cmd.CombinedOutput()
	window := time.Since(start)
	after, err := m.read(ctx, proxy)
	if runErr != nil {
		return sample{}, fmt.Errorf("%s: %w: %s", strings.Join(lc.argv, " "), runErr, lastLine(string(out)))
	}
	if err != nil {
		return sample{}, err
	}
	parse := parseH2load
	if lc.argv[0] == "wrk" {
		parse = parseWrk
	}
	res, err := parse(string(out))
	if err != nil {
		return sample{}, err
	}
	if res.errors <= lc.stopLoss {
		res.errors = 0 // requests cut when h2load stopped
	}
	s := sample{
		toolResult: res,
		window:     window,
		proxyCPU:   after.proxy.cpu - before.proxy.cpu,
		upstream:   after.accepts - before.accepts,
	}
	s.clientCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() + after.backend.cpu - before.backend.cpu
	known := s.proxyCPU + s.clientCPU + (after.self - before.self)
	s.background = (after.machine.sub(before.machine).busy - known).Seconds() / window.Seconds()
	return s, nil
}

// latencies reads the fixed-rate pass's log of h2load into s.
func (s *sample) latencies(logFile string) error {
	data, err := os.ReadFile(logFile)
	if err != nil {
		return err
	}
	s.latency, err = parseH2loadLog(string(data))
	return err
}
