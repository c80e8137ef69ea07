package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// contender is a proxy under test.
type contender struct {
	name string
	// start runs the proxy, listening on listen and splicing serverName's
	// connections to member, with its files in dir.
	start func(dir, listen, member string) (*proxy, error)
}

// proxy is a running contender: its root process (nginx's master, whose
// workers are its children).
type proxy struct {
	cmd  *exec.Cmd
	done chan error
	log  string
}

// ramjetdConfig is ramjetd's configuration: one application whose host is
// passed through to one member, as the controller renders ssl-passthrough.
var ramjetdConfig = template.Must(template.New("ramjetd").Parse(`server:
  listeners:
    https: {address: "{{.Listen}}", tls: {}}
  health: {address: "{{.Health}}"}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: true}
tenants:
  bench:
    applications:
      pass:
        domains: [{{.Name}}]
        passthrough: {pool: member}
        routes:
          - match: {path: {prefix: /}}
            action: {respond: {status: 404}}
    pools:
      member:
        members: ["{{.Member}}"]
`))

// nginxConfig is nginx's: a stream server reading the ClientHello
// (ssl_preread) and choosing the member by its server name, one worker.
var nginxConfig = template.Must(template.New("nginx").Parse(`load_module {{.Module}};
daemon off;
master_process on;
worker_processes 1;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log warn;
events { worker_connections 4096; }
stream {
    map $ssl_preread_server_name $member {
        {{.Name}} {{.Member}};
        default 127.0.0.1:1;
    }
    server {
        listen {{.Listen}};
        ssl_preread on;
        proxy_pass $member;
    }
}
`))

// configData is what the templates fill in.
type configData struct {
	Dir, Listen, Health, Member, Name, Module string
}

func render(t *template.Template, d configData) (string, error) {
	var b bytes.Buffer
	err := t.Execute(&b, d)
	return b.String(), err
}

// nginxModule is Debian's stream module (libnginx-mod-stream).
const nginxModule = "/usr/lib/nginx/modules/ngx_stream_module.so"

func contenders(ramjetd string) []contender {
	return []contender{
		{name: "ramjetd", start: func(dir, listen, member string) (*proxy, error) {
			health, err := freeAddr()
			if err != nil {
				return nil, err
			}
			cfg, err := render(ramjetdConfig, configData{Dir: dir, Listen: listen, Health: health, Member: member, Name: serverName})
			if err != nil {
				return nil, err
			}
			path := filepath.Join(dir, "ramjet.yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				return nil, err
			}
			p, err := spawn(dir, "ramjetd", []string{"GOMAXPROCS=1"}, ramjetd, "--config", path, "--log-level", "warn")
			if err != nil {
				return nil, err
			}
			return p, p.ready(func() error {
				resp, err := http.Get("http://" + health + "/healthz")
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("health %d", resp.StatusCode)
				}
				return nil
			})
		}},
		{name: "nginx", start: func(dir, listen, member string) (*proxy, error) {
			cfg, err := render(nginxConfig, configData{Dir: dir, Listen: listen, Member: member, Name: serverName, Module: nginxModule})
			if err != nil {
				return nil, err
			}
			path := filepath.Join(dir, "nginx.conf")
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				return nil, err
			}
			p, err := spawn(dir, "nginx", nil, "nginx", "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
			if err != nil {
				return nil, err
			}
			return p, p.ready(func() error {
				c, err := net.DialTimeout("tcp", listen, time.Second)
				if err != nil {
					return err
				}
				return c.Close()
			})
		}},
	}
}

// spawn starts a proxy on CPU 0 (taskset), its output to dir/name.log.
func spawn(dir, name string, env []string, path string, args ...string) (*proxy, error) {
	log := filepath.Join(dir, name+".log")
	out, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("taskset", append([]string{"-c", "0", path}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	p := &proxy{cmd: cmd, done: make(chan error, 1), log: log}
	go func() {
		p.done <- cmd.Wait()
		out.Close()
	}()
	return p, nil
}

// ready polls check for up to 10 s, failing early when the proxy exits.
func (p *proxy) ready(check func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case exit := <-p.done:
			p.done <- exit
			data, _ := os.ReadFile(p.log)
			return fmt.Errorf("exited (%v): %s", exit, strings.TrimSpace(string(data)))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 10s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the proxy (SIGTERM, then SIGKILL after 5 s).
func (p *proxy) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// pid is the proxy's root process (taskset execs the program).
func (p *proxy) pid() int { return p.cmd.Process.Pid }

// freeAddr is a free loopback address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// version runs a program's version flag and returns its first line.
func version(path string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// checkSplice makes one connection of each kind through the proxy: the
// member's byte comes back for a connect, and bytes for a download.
func checkSplice(addr string, hello []byte) error {
	for _, cmd := range []byte{cmdConnect, cmdDownload} {
		l := &load{addr: addr, hello: append(append([]byte{}, hello...), cmd), cmd: cmd, stop: time.Now().Add(3 * time.Second)}
		c, err := l.dial()
		if err != nil {
			return err
		}
		buf := make([]byte, 1024)
		n, err := c.Read(buf)
		c.Close()
		if n == 0 {
			return fmt.Errorf("command %c: nothing came back through the proxy: %w", cmd, err)
		}
	}
	return nil
}

var errNoProcess = errors.New("no such process")

// cpuOf sums utime+stime of pid and its descendants (/proc).
func cpuOf(pid int) (time.Duration, error) {
	stats, err := allStats()
	if err != nil {
		return 0, err
	}
	if _, ok := stats[pid]; !ok {
		return 0, errNoProcess
	}
	var total time.Duration
	for _, p := range descendants(stats, pid) {
		total += stats[p].cpu
	}
	return total, nil
}

// ownCPU is this program's utime+stime, without its children (the
// proxies).
func ownCPU() (time.Duration, error) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	st, err := parseStat(string(data))
	return st.cpu, err
}

// procStat is what the benchmark reads from /proc/<pid>/stat.
type procStat struct {
	ppid int
	cpu  time.Duration
}

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 per second on
// every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// parseStat reads the parent and utime+stime of a /proc/<pid>/stat line
// (the command, in parentheses, may hold spaces).
func parseStat(line string) (procStat, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return procStat{}, errors.New("no command in parentheses")
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("%d fields after the command, want 13 or more", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseInt(f[11], 10, 64)
	stime, err3 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, err
	}
	return procStat{ppid: ppid, cpu: time.Duration(utime+stime) * clockTick}, nil
}

func allStats() (map[int]procStat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := map[int]procStat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if st, err := parseStat(string(data)); err == nil {
			out[pid] = st
		}
	}
	return out, nil
}

// descendants lists root and every process below it.
func descendants(stats map[int]procStat, root int) []int {
	children := map[int][]int{}
	for pid, st := range stats {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// busy is the machine's busy CPU time so far (/proc/stat: all but idle and
// iowait), in all cores.
func busy() (time.Duration, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return parseBusy(line)
}

// parseBusy reads the first line of /proc/stat.
func parseBusy(line string) (time.Duration, error) {
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var total int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 8 { // guest times are counted in user already
			break
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return time.Duration(total) * clockTick, nil
}
