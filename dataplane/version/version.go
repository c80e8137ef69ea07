// Package version says which build of Ramjet a program is: the module
// version and the commit it was built from, for `ramjetd --version` and
// `ramjet-ingress --version`.
//
// The Makefile sets both at link time (every build here runs with
// -buildvcs=false, so Go records no commit of its own):
//
//	-ldflags "-X github.com/ramjet-dev/ramjet/dataplane/version.version=v0.3.0-12-gabc1234
//	          -X github.com/ramjet-dev/ramjet/dataplane/version.commit=abc1234..."
//
// A build without them (go build, go install ...@v0.3.0) falls back to the
// build information Go records: the module version, and the commit when Go
// recorded one; what neither says is "unknown".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are set by the linker (-X); empty means not set.
var (
	version string
	commit  string
)

// Unknown stands for a version or commit nothing recorded.
const Unknown = "unknown"

// Info is what a program knows of its build.
type Info struct {
	// Version is the module version, as `git describe --tags --always
	// --dirty` or the module proxy names it (v0.3.0, v0.3.0-12-gabc1234,
	// abc1234-dirty), or Unknown.
	Version string
	// Commit is the full commit hash, or Unknown.
	Commit string
	// Go is the Go release the program was built with.
	Go string
}

// Get returns the build information of the running program.
func Get() Info {
	build, _ := debug.ReadBuildInfo()
	return resolve(version, commit, build)
}

// String is the line a program prints for --version:
// "ramjetd v0.3.0-12-gabc1234 (commit abc1234..., go1.26.8)".
func String(program string) string {
	i := Get()
	return fmt.Sprintf("%s %s (commit %s, %s)", program, i.Version, i.Commit, i.Go)
}

// resolve chooses each field: what the linker set, else what Go recorded
// in build, else Unknown. build may be nil.
func resolve(linkedVersion, linkedCommit string, build *debug.BuildInfo) Info {
	info := Info{Version: linkedVersion, Commit: linkedCommit, Go: runtime.Version()}
	if build != nil {
		info.Go = build.GoVersion
		if info.Version == "" && build.Main.Version != "(devel)" {
			info.Version = build.Main.Version
		}
		if info.Commit == "" {
			info.Commit = setting(build, "vcs.revision")
		}
	}
	if info.Version == "" {
		info.Version = Unknown
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	return info
}

// setting returns the value of one build setting, or "".
func setting(build *debug.BuildInfo, key string) string {
	for _, s := range build.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
