package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// programs are the commands of the Ramjet module the image holds; each
// binary is named as its folder.
var programs = []string{"ramjetd", "ramjet-ingress"}

// versionPackage is where the programs keep the version and the commit the
// linker sets (the Makefile's LDFLAGS).
const versionPackage = "github.com/ramjet-dev/ramjet/dataplane/version"

// buildPrograms builds the programs of module static into work and returns
// their contents by binary name.
func buildPrograms(module, work, version, commit string) (map[string][]byte, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	work, err := filepath.Abs(work)
	if err != nil {
		return nil, err
	}
	ldflags := "-X " + versionPackage + ".version=" + version + " -X " + versionPackage + ".commit=" + commit
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", work + "/"}
	for _, name := range programs {
		args = append(args, "./cmd/"+name)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("building the programs in %s: %w", module, err)
	}
	bins := map[string][]byte{}
	for _, name := range programs {
		data, err := os.ReadFile(filepath.Join(work, name))
		if err != nil {
			return nil, err
		}
		bins[name] = data
	}
	return bins, nil
}
