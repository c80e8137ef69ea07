package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// runInit runs an init container to its end; one that fails fails the pod.
func (p *Pod) runInit(c *containerRun) error {
	if err := p.startContainer(c); err != nil {
		return err
	}
	select {
	case <-c.exited:
	case <-time.After(setupTimeout):
		return fmt.Errorf("init container %s has not completed after %s; its log:\n%s", c.spec.Name, setupTimeout, tail(p.log(c), 40))
	}
	p.mu.Lock()
	code := c.state.exitCode
	p.mu.Unlock()
	if code != 0 {
		return fmt.Errorf("init container %s exited with code %d; its log:\n%s", c.spec.Name, code, tail(p.log(c), 40))
	}
	return nil
}

// startContainer starts c's process, whose output goes to its log.
func (p *Pod) startContainer(c *containerRun) error {
	stdout, stderr, drain, err := p.containerOutput(c)
	if err != nil {
		return err
	}
	cmd, err := startInContainer(c.init, stdout, stderr)
	stdout.Close() // the process has its own copies
	stderr.Close() // (a second Close of the same file does nothing)
	if err != nil {
		drain()
		return fmt.Errorf("%s (%s): %w", c.field, c.spec.Name, err)
	}
	c.cmd = cmd
	p.update(func() { c.state.started, c.state.pid = time.Now(), cmd.Process.Pid })
	go func() {
		_ = cmd.Wait()
		drain()
		p.update(func() { c.state.finished, c.state.exitCode = time.Now(), exitCode(cmd.ProcessState) })
		close(c.exited)
	}()
	return nil
}

// containerOutput returns the files c's process writes its stdout and
// stderr to (the caller closes them once it has started), and drain,
// which returns once its output is logged: the plain log itself, or with
// PodOptions.CRILog pipes copied to it and to the CRI log.
func (p *Pod) containerOutput(c *containerRun) (stdout, stderr *os.File, drain func(), err error) {
	if !p.opts.CRILog {
		log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, nil, err
		}
		return log, log, func() {}, nil
	}
	l, stdout, stderr, err := openCRILog(c.logPath, p.CRILogPath(c.spec.Name))
	if err != nil {
		return nil, nil, nil, err
	}
	return stdout, stderr, l.wait, nil
}

// exitCode is the code kubelet reports: the exit status, or 128 plus the
// signal that ended the process.
func exitCode(s *os.ProcessState) int {
	if ws, ok := s.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return s.ExitCode()
}

// postStart runs c's postStart hook, as kubelet before it starts the next
// container.
func (p *Pod) postStart(c *containerRun) error {
	if c.spec.Lifecycle == nil || c.spec.Lifecycle.PostStart == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	out, err := p.runHandler(ctx, c, c.spec.Lifecycle.PostStart)
	p.logHook(c, "postStart", out, err)
	if err != nil {
		return fmt.Errorf("%s.lifecycle.postStart: %w", c.field, err)
	}
	return nil
}

// logHook appends a hook's result and output to the container's log.
func (p *Pod) logHook(c *containerRun, hook, out string, err error) {
	result := "ok"
	if err != nil {
		result = "failed: " + err.Error()
	}
	f, ferr := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "=== harness: lifecycle.%s %s\n%s", hook, result, out)
}

// exec runs argv in the running container c (its namespaces, root, user
// and environment) until it ends or ctx is done, and returns its output.
func (p *Pod) exec(ctx context.Context, c *containerRun, argv []string) (string, error) {
	pid, err := p.pid(c)
	if err != nil {
		return "", err
	}
	spec := c.init
	spec.Join, spec.Mounts, spec.Argv = pid, nil, argv
	var out bytes.Buffer
	cmd, err := startInContainer(spec, &out, &out)
	if err != nil {
		return "", fmt.Errorf("%v in container %s: %w", argv, c.spec.Name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	if err != nil {
		return out.String(), fmt.Errorf("%v in container %s: %w: %s", argv, c.spec.Name, err, bytes.TrimSpace(out.Bytes()))
	}
	return out.String(), nil
}

// Exec runs command in container as kubectl exec does (the container's
// user, mounts, network and environment) and returns its output (standard
// output and error together); a failure or an exit code other than 0 is
// an error with the output.
func (p *Pod) Exec(ctx context.Context, container string, command ...string) (string, error) {
	c, err := p.container(container)
	if err != nil {
		return "", err
	}
	return p.exec(ctx, c, command)
}
