package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is a server the benchmark started (a proxy or the backend),
// pinned to one CPU with taskset, which execs it: the pid is the server's.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string        // its stdout and stderr
	done chan struct{} // closed when it has exited
}

// startProcess runs argv on cpu with env added, its output into logPath.
func startProcess(name string, cpu int, argv, env []string, logPath string) (*process, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child has its own descriptor
	cmd := exec.Command("taskset", append([]string{"-c", strconv.Itoa(cpu)}, argv...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	// Killed with this program, should it die without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid is the server's process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// waitPort waits until the server accepts connections on port, and fails
// early when it exits.
func (p *process) waitPort(port int, timeout time.Duration) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		select {
		case <-p.done:
			return p.failure(errors.New("exited before it listened"))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return p.failure(fmt.Errorf("not listening on %s after %s", addr, timeout))
		}
	}
}

// failure is err with the end of the server's log.
func (p *process) failure(err error) error {
	data, _ := os.ReadFile(p.log)
	tail := strings.TrimSpace(string(data))
	if len(tail) > 600 {
		tail = "…" + tail[len(tail)-600:]
	}
	return fmt.Errorf("%s: %w; its log (%s): %s", p.name, err, p.log, tail)
}

// stop asks the server to stop (SIGTERM: nginx's master stops its
// workers) and kills it after ten seconds.
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}
