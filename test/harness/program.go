package harness

import (
	"path"
	"path/filepath"
)

// StartProgram starts the program at the path program on the host with args, its
// output appended to logPath, killed when the test binary dies, as the
// harness runs etcd and kube-apiserver; the caller stops it (Stop). Use
// Network.Start for a program inside a Network's namespace.
func StartProgram(name, program, logPath string, args ...string) (*Program, error) {
	p, err := startProcess(name, program, logPath, args...)
	if err != nil {
		return nil, err
	}
	return &Program{Name: name, LogPath: logPath, p: p}, nil
}

// Exited reports whether the program has ended.
func (p *Program) Exited() bool { return p.p.exited() }

// BuildCommand builds the command of pkg (a package path from the module's
// root, e.g. "./test/conformance/echo") from the working tree, static and
// -trimpath as an image holds it, into .cache/test-bin/sub (go build's
// cache makes a rebuild quick), and returns the program's path.
func BuildCommand(sub, pkg string) (string, error) {
	dir, err := buildGo(sub, true, pkg)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path.Base(pkg)), nil
}
