// Command podinit starts a process of a container of the harness's pod
// runner, as a container runtime's init: the harness runs it as root with
// the container's spec (JSON, see the container package) as its argument,
// and it becomes the container's program. When it fails before that, it
// writes why to file descriptor 3 (closed on a successful exec, so an
// empty read tells the harness the program runs) and exits with 127.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ramjet-dev/ramjet/test/harness/internal/container"
)

// statusFD is the pipe podinit reports a failure on.
const statusFD = 3

func main() {
	unix.CloseOnExec(statusFD)
	status := os.NewFile(statusFD, "status")
	if len(os.Args) != 2 {
		fail(status, fmt.Errorf("usage: podinit SPEC (JSON)"))
	}
	var spec container.Spec
	if err := json.Unmarshal([]byte(os.Args[1]), &spec); err != nil {
		fail(status, fmt.Errorf("the spec: %w", err))
	}
	fail(status, container.Exec(spec))
}

func fail(status *os.File, err error) {
	fmt.Fprintln(status, err)
	os.Exit(127)
}
