package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// statLine is a /proc/<pid>/stat line as Linux 6.x writes it (taken from
// cat's), with the given command, parent and CPU ticks.
func statLine(pid int, comm string, ppid int, utime, stime int) string {
	return fmt.Sprintf("%d (%s) R %d 32509 23751 0 -1 4194304 99 0 0 0 %d %d 0 0 20 0 1 0 1518658 3133440 382 "+
		"18446744073709551615 94454008127488 94454008147369 140736413760800 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "+
		"94454008163376 94454008164992 94454030598144 140736413768382 140736413768402 140736413768402 140736413769707 0\n",
		pid, comm, ppid, utime, stime)
}

// statusFile is a /proc/<pid>/status with the given VmHWM.
func statusFile(hwmKiB int) string {
	return "Name:\tnginx\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t   12000 kB\n" +
		fmt.Sprintf("VmHWM:\t%8d kB\n", hwmKiB) + "VmRSS:\t    1800 kB\nThreads:\t1\n"
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{"plain", statLine(7, "nginx", 1, 250, 50), procStat{ppid: 1, cpu: 3 * time.Second}, false},
		{"command with spaces and parentheses", statLine(7, "a) b (c", 42, 1, 0), procStat{ppid: 42, cpu: 10 * time.Millisecond}, false},
		{"no parenthesis", "7 nginx R 1 2 3", procStat{}, true},
		{"cut short", "7 (nginx) R 1 2 3 4", procStat{}, true},
		{"ticks not a number", strings.Replace(statLine(7, "x", 1, 1, 1), " 1 1 0 0 20", " x 1 0 0 20", 1), procStat{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.line)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, error: %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseHWM(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    int64
		wantErr bool
	}{
		{"present", statusFile(21504), 21504, false},
		{"kernel thread (none)", "Name:\tkthreadd\nState:\tS (sleeping)\n", 0, true},
		{"other unit", "VmHWM:\t12 MB\n", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHWM(tc.status)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %d, %v; want %d, error: %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseMachineCPU(t *testing.T) {
	const tick = clockTick
	tests := []struct {
		name    string
		stat    string
		want    machineCPU
		wantErr bool
	}{
		{"Linux 6.x", "cpu  1115982 1326 310036 1546368 14675 0 18760 8912 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n",
			machineCPU{busy: (1115982 + 1326 + 310036 + 18760) * tick, steal: 8912 * tick,
				total: (1115982 + 1326 + 310036 + 1546368 + 14675 + 18760 + 8912) * tick}, false},
		{"not the cpu line", "intr 1 2 3\n", machineCPU{}, true},
		{"too few fields", "cpu  1 2 3\n", machineCPU{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMachineCPU(tc.stat)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, error: %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// procTree is a /proc with nginx's master (100), its worker (101), a
// helper of the worker (102) and an unrelated process (200).
func procTree() fstest.MapFS {
	fsys := fstest.MapFS{"stat": {Data: []byte("cpu  1 2 3 4 5 6 7 8 0 0\n")}}
	for _, p := range []struct{ pid, ppid, ticks, hwm int }{
		{100, 1, 10, 3000}, {101, 100, 500, 9000}, {102, 101, 5, 1000}, {200, 1, 9999, 50000},
	} {
		fsys[fmt.Sprintf("%d/stat", p.pid)] = &fstest.MapFile{Data: []byte(statLine(p.pid, "nginx", p.ppid, p.ticks, 0))}
		fsys[fmt.Sprintf("%d/status", p.pid)] = &fstest.MapFile{Data: []byte(statusFile(p.hwm))}
	}
	return fsys
}

func TestTree(t *testing.T) {
	tests := []struct {
		name    string
		root    int
		want    []int
		wantErr bool
	}{
		{"master and descendants", 100, []int{100, 101, 102}, false},
		{"a leaf", 102, []int{102}, false},
		{"gone", 300, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tree(procTree(), tc.root)
			if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
				t.Errorf("got %v, %v; want %v, error: %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestTreeUsage(t *testing.T) {
	got, err := treeUsage(procTree(), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := usage{cpu: (10 + 500 + 5) * clockTick, hwmKiB: 3000 + 9000 + 1000}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
