package harness

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// RamjetRepository is the repository of Ramjet's image, the one the chart
// names.
const RamjetRepository = "ghcr.io/ramjet-dev/ramjet"

// defaultPath is the PATH of images that set none, as container runtimes
// give them.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Image is what the pod runner runs for a container image instead of
// pulling it: the image's files that matter (its programs), bind-mounted
// read-only at their paths in the container, and the image's
// configuration. The container's file system holds nothing else besides
// its volumes, /proc, a few devices and /etc/hosts, /etc/hostname and
// /etc/resolv.conf, as a kubelet mounts them.
type Image struct {
	// Files maps an absolute path inside the container to the host file
	// mounted there, e.g. "/usr/local/bin/ramjetd" to a built binary.
	Files map[string]string
	// Entrypoint and Cmd are the image's: a container without command runs
	// Entrypoint followed by its args, or by Cmd when it has no args
	// either, as Kubernetes does.
	Entrypoint, Cmd []string
	// Env is the image's environment (NAME=value), which the container's
	// overrides; nil gives the usual PATH.
	Env []string
	// User is the image's numeric user, "UID" or "UID:GID"; empty is root.
	// The securityContext's runAsUser and runAsGroup override it.
	User string
	// WorkingDir is the image's working directory; empty is "/".
	WorkingDir string
}

// Registry maps image repositories (without tag or digest, spelt as the
// manifests spell them, e.g. "ghcr.io/ramjet-dev/ramjet") to what the pod
// runner runs for them.
type Registry map[string]Image

// Image returns the Image of ref, a container's image with or without a
// tag or digest. An image the registry lacks is an error that names it.
func (r Registry) Image(ref string) (Image, error) {
	repo := Repository(ref)
	img, ok := r[repo]
	if !ok {
		known := make([]string, 0, len(r))
		for k := range r {
			known = append(known, k)
		}
		slices.Sort(known)
		return Image{}, fmt.Errorf("image %q: the harness's registry has no program for repository %q (it has %s)",
			ref, repo, strings.Join(known, ", "))
	}
	if img.Env == nil {
		img.Env = []string{defaultPath}
	}
	return img, nil
}

// Repository returns the repository of an image reference: ref without
// its digest (@sha256:...) and tag (:v1).
func Repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// RamjetImage returns Ramjet's image as CHART-CONTRACT.md describes it,
// with ramjetd and ramjet-ingress built from the working tree as the image
// builds them (static, -trimpath; once per test binary, into
// .cache/test-bin/image) at /usr/local/bin.
func RamjetImage() (Image, error) {
	bin, err := imageBinaries()
	if err != nil {
		return Image{}, err
	}
	return Image{
		Files: map[string]string{
			"/usr/local/bin/ramjetd":        filepath.Join(bin, "ramjetd"),
			"/usr/local/bin/ramjet-ingress": filepath.Join(bin, "ramjet-ingress"),
		},
		Entrypoint: []string{"/usr/local/bin/ramjetd"},
		Cmd:        []string{"--config", "/etc/ramjet/generated/ramjet.yaml"},
		User:       "65532:65532",
		WorkingDir: "/",
	}, nil
}

// DefaultRegistry returns a Registry holding Ramjet's image
// (RamjetImage).
func DefaultRegistry() (Registry, error) {
	img, err := RamjetImage()
	if err != nil {
		return nil, err
	}
	return Registry{RamjetRepository: img}, nil
}
