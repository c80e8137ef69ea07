package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/ramjet-dev/ramjet/test/harness/internal/container"
)

// podInit builds the podinit command (test/harness/podinit) once per test
// binary.
var podInit = sync.OnceValues(func() (string, error) {
	dir, err := buildGo("podinit", true, "./test/harness/podinit")
	return filepath.Join(dir, "podinit"), err
})

// startInContainer starts a process of a container: podinit, run as root,
// sets the container up as spec says (or joins it) and becomes its
// program. It returns once the program runs, or with the reason podinit
// gave up; the program's output goes to stdout and stderr. The process
// is killed when the test binary dies.
func startInContainer(spec container.Spec, stdout, stderr io.Writer) (*exec.Cmd, error) {
	bin, err := podInit()
	if err != nil {
		return nil, err
	}
	spec.Parent = os.Getpid()
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	status, report, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer status.Close()
	cmd := &exec.Cmd{
		Path: bin, Args: []string{"podinit", string(data)},
		Env:    []string{}, // nil would be the test binary's
		Stdout: stdout, Stderr: stderr,
		ExtraFiles: []*os.File{report},
		// The program sets its parent-death signal again once its user is
		// set (see container.Exec).
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true},
	}
	err = cmd.Start()
	report.Close()
	if err != nil {
		return nil, fmt.Errorf("starting podinit: %w", err)
	}
	// Empty once the program runs: podinit's end of the pipe closes on exec.
	why, _ := io.ReadAll(status)
	if len(why) > 0 {
		_ = cmd.Wait()
		return nil, errors.New(strings.TrimSpace(string(why)))
	}
	return cmd, nil
}
