//go:build conformance

package cluster

import (
	"sync"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// EchoRepositories are the repositories of the Gateway API conformance
// suite's echo-basic image (its manifests' and the staging registry's):
// Registry runs test/conformance/echo for them.
var EchoRepositories = []string{
	"registry.k8s.io/gateway-api/echo-basic",
	"gcr.io/k8s-staging-gateway-api/echo-basic",
}

// echoBinary builds test/conformance/echo once per test binary.
var echoBinary = sync.OnceValues(func() (string, error) {
	return harness.BuildCommand("echo", "./test/conformance/echo")
})

// EchoImage returns the image that runs test/conformance/echo, built from
// the working tree once per test binary, as /echo-basic.
func EchoImage() (harness.Image, error) {
	bin, err := echoBinary()
	if err != nil {
		return harness.Image{}, err
	}
	return harness.Image{
		Files:      map[string]string{"/echo-basic": bin},
		Entrypoint: []string{"/echo-basic"},
		User:       "65532:65532",
	}, nil
}

// Registry returns the images the pod runner runs by default: the echo
// server for EchoRepositories. Add Ramjet's (harness.DefaultRegistry) with
// WithImages to run its chart's pods. A pod with an image of none of them
// runs no process (see Start).
func Registry() (harness.Registry, error) {
	echo, err := EchoImage()
	if err != nil {
		return nil, err
	}
	reg := harness.Registry{}
	for _, repo := range EchoRepositories {
		reg[repo] = echo
	}
	return reg, nil
}
