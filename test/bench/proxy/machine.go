package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// facts describe the machine and the software measured.
type facts struct {
	cpu, kernel, memory string
	cores               int
	versions            [][2]string // name, version line
	gogc                string      // of ramjetd
}

// readMachine gathers the facts; what cannot be read is "?".
func readMachine() facts {
	f := facts{cpu: "?", kernel: "?", memory: "?", gogc: os.Getenv("GOGC")}
	if f.gogc == "" {
		f.gogc = "unset (100)"
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			key, val, _ := strings.Cut(line, ":")
			switch strings.TrimSpace(key) {
			case "model name":
				f.cpu = strings.TrimSpace(val)
			case "processor":
				f.cores++
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		f.kernel = strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		line, _, _ := strings.Cut(string(data), "\n")
		if fields := strings.Fields(line); len(fields) == 3 {
			if kib, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				f.memory = strconv.FormatFloat(float64(kib)/(1<<20), 'f', 1, 64) + " GiB"
			}
		}
	}
	f.versions = [][2]string{
		{"ramjetd", "commit " + firstLine("", "git", "rev-parse", "--short", "HEAD")},
		{"Go (builds ramjetd)", firstLine("", "go", "version")},
		{"nginx", firstLine("", "nginx", "-v")},
		{"HAProxy", firstLine("", "haproxy", "-v")},
		{"OpenSSL (nginx, HAProxy, wrk, h2load)", firstLine("Running on OpenSSL", "haproxy", "-vv")},
		{"wrk", firstLine("", "wrk", "-v")},
		{"h2load", firstLine("", "h2load", "--version")},
	}
	return f
}

// firstLine is the first line of a command's output (stdout and stderr)
// that holds contains, "?" when there is none. Its exit status does not
// matter: wrk -v exits 1.
func firstLine(contains string, argv ...string) string {
	out, _ := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	for line := range strings.Lines(string(out)) {
		if line = strings.TrimSpace(line); line != "" && strings.Contains(line, contains) {
			return line
		}
	}
	return "?"
}

// readMachineCPU is the machine's CPU time now, zero when /proc/stat
// cannot be read.
func readMachineCPU() machineCPU {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}
	}
	t, _ := parseMachineCPU(string(data))
	return t
}
