package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc (USER_HZ), 100 per second
// on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// usage is what /proc says about a set of processes at one moment.
type usage struct {
	cpu    time.Duration // utime+stime of every process, summed
	hwmKiB int64         // peak resident set (VmHWM), summed
}

// treeUsage sums the CPU time and peak resident set of the process root
// and every process below it (nginx's master and its workers, say), read
// from fsys, a view of /proc.
func treeUsage(fsys fs.FS, root int) (usage, error) {
	pids, err := tree(fsys, root)
	if err != nil {
		return usage{}, err
	}
	var u usage
	for _, pid := range pids {
		p, err := processUsage(fsys, pid)
		if err != nil {
			return usage{}, err
		}
		u.cpu += p.cpu
		u.hwmKiB += p.hwmKiB
	}
	return u, nil
}

// processUsage reads the CPU time and peak resident set of one process.
func processUsage(fsys fs.FS, pid int) (usage, error) {
	dir := strconv.Itoa(pid)
	stat, err1 := fs.ReadFile(fsys, dir+"/stat")
	status, err2 := fs.ReadFile(fsys, dir+"/status")
	if err := errors.Join(err1, err2); err != nil {
		return usage{}, err
	}
	st, err := parseStat(string(stat))
	if err != nil {
		return usage{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	hwm, err := parseHWM(string(status))
	if err != nil {
		return usage{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return usage{cpu: st.cpu, hwmKiB: hwm}, nil
}

// tree lists root and its descendants, root first, from the parent of
// every process in fsys. A process that exits while it is read is left out.
func tree(fsys fs.FS, root int) ([]int, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		stat, err := fs.ReadFile(fsys, e.Name()+"/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if st, err := parseStat(string(stat)); err == nil {
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	if _, err := fs.Stat(fsys, strconv.Itoa(root)); err != nil {
		return nil, fmt.Errorf("process %d: %w", root, err)
	}
	pids := []int{root}
	for i := 0; i < len(pids); i++ {
		pids = append(pids, children[pids[i]]...)
	}
	return pids, nil
}

// procStat is the part of /proc/<pid>/stat the benchmark reads.
type procStat struct {
	ppid int
	cpu  time.Duration // utime + stime
}

// parseStat reads /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so the fields are counted from the last ')'.
func parseStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("no ')' after the command name")
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15).
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseInt(f[11], 10, 64)
	stime, err3 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, err
	}
	return procStat{ppid: ppid, cpu: time.Duration(utime+stime) * clockTick}, nil
}

// parseHWM reads VmHWM (peak resident set, KiB) from /proc/<pid>/status.
func parseHWM(s string) (int64, error) {
	for line := range strings.Lines(s) {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("VmHWM: %q is not a number of kB", strings.TrimSpace(rest))
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, errors.New("no VmHWM line")
}

// machineCPU is the machine's CPU time from the first line of /proc/stat.
type machineCPU struct {
	busy  time.Duration // user, nice, system, irq, softirq (guest is in user)
	steal time.Duration // taken by the hypervisor
	total time.Duration // all of the above, idle and iowait
}

// parseMachineCPU reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal [guest guest_nice].
func parseMachineCPU(s string) (machineCPU, error) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return machineCPU{}, fmt.Errorf("first line %q is not the cpu line", line)
	}
	var t machineCPU
	for i, v := range f[1:9] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return machineCPU{}, fmt.Errorf("cpu field %d: %w", i+1, err)
		}
		d := time.Duration(n) * clockTick
		t.total += d
		switch i {
		case 3, 4: // idle, iowait
		case 7:
			t.steal += d
		default:
			t.busy += d
		}
	}
	return t, nil
}

// sub is the CPU time spent between two readings.
func (t machineCPU) sub(before machineCPU) machineCPU {
	return machineCPU{busy: t.busy - before.busy, steal: t.steal - before.steal, total: t.total - before.total}
}
