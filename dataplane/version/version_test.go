package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	const hash = "0123456789abcdef0123456789abcdef01234567"
	recorded := func(mainVersion string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ramjet-dev/ramjet", Version: mainVersion}, Settings: settings}
	}
	for _, tc := range []struct {
		name                  string
		linkedVersion, commit string
		build                 *debug.BuildInfo
		want                  Info
	}{
		{
			name:          "set by the Makefile",
			linkedVersion: "v0.3.0-12-gabc1234", commit: hash,
			build: recorded("(devel)"),
			want:  Info{Version: "v0.3.0-12-gabc1234", Commit: hash, Go: "go1.26.8"},
		},
		{
			name:          "the Makefile outside a tagged checkout",
			linkedVersion: "abc1234-dirty", commit: hash,
			build: recorded("(devel)"),
			want:  Info{Version: "abc1234-dirty", Commit: hash, Go: "go1.26.8"},
		},
		{
			name:  "go install of a released module",
			build: recorded("v0.3.0"),
			want:  Info{Version: "v0.3.0", Commit: Unknown, Go: "go1.26.8"},
		},
		{
			name:  "go build with vcs stamping",
			build: recorded("v0.3.1-0.20261201120000-0123456789ab", debug.BuildSetting{Key: "vcs.revision", Value: hash}),
			want:  Info{Version: "v0.3.1-0.20261201120000-0123456789ab", Commit: hash, Go: "go1.26.8"},
		},
		{
			name:  "go build with -buildvcs=false",
			build: recorded("(devel)"),
			want:  Info{Version: Unknown, Commit: Unknown, Go: "go1.26.8"},
		},
		{
			name:          "the linker's values win over Go's",
			linkedVersion: "v0.4.0", commit: hash,
			build: recorded("v0.3.0", debug.BuildSetting{Key: "vcs.revision", Value: "fedcba"}),
			want:  Info{Version: "v0.4.0", Commit: hash, Go: "go1.26.8"},
		},
		{
			name: "no build information",
			want: Info{Version: Unknown, Commit: Unknown, Go: runtime.Version()},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolve(tc.linkedVersion, tc.commit, tc.build); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
