package harness

import (
	"context"
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

// process is one run of a program whose output goes to a log file that
// survives restarts (each run appends).
type process struct {
	name string
	cmd  *exec.Cmd
	// done is closed when the program has exited; err is then its result.
	done chan struct{}
	err  error
}

// startProcess starts path with args, appending its output to logPath.
// The program is killed when the test binary dies (Pdeathsig), so a test
// that times out leaves no server behind.
func startProcess(name, path, logPath string, args ...string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "=== %s %s %s\n", time.Now().Format(time.RFC3339Nano), path, strings.Join(args, " "))
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Pdeathsig fires when the thread that started the child exits, not only
	// the process: the harness locks threads only in goroutines that unlock
	// them again (see Network.listen), so Go keeps every thread alive.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the program has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, and SIGKILL when the program has not ended within
// grace. It returns once the program has ended.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitReady calls ready every 50 ms until it returns nil, the program
// exits or timeout passes.
func (p *process) waitReady(timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		last = ready(attempt)
		cancelAttempt()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited while starting: %v", p.name, p.err)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w", p.name, timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a
// moment ago. Another process may take one before the program binds it:
// callers retry when the program fails with "address already in use".
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// errPortTaken marks a start that failed because a port was taken.
var errPortTaken = errors.New("port taken")

// portTaken wraps err with errPortTaken when the log says a bind failed.
func portTaken(err error, logPath string) error {
	data, _ := os.ReadFile(logPath)
	if strings.Contains(string(data), "address already in use") {
		return fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

// rssMiB returns the resident memory of pid in MiB, or -1.
func rssMiB(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb / 1024
		}
	}
	return -1
}
