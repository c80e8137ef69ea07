// Command image is the image builder behind `make image`: it builds
// ramjetd and ramjet-ingress static (CGO_ENABLED=0, -trimpath, the version
// and commit linked in as `make build` does) and assembles the container
// image ghcr.io/ramjet-dev/ramjet as an OCI image layout, without a
// container engine and without a base image: one layer holding both
// programs, the build machine's CA bundle, /etc/passwd and /etc/group with
// the user nonroot (65532), and the folders the pod mounts over.
//
// The same inputs give the same image digest: the layer's entries are
// sorted, owned by root and dated -created, like the image's config.
//
//	go run . -module ../../.. -work DIR -out DIR -version V -commit C
//
// It lives in its own module so that go-containerregistry stays out of
// Ramjet's go.mod.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.module, "module", "../../..", "the Ramjet checkout to build")
	flag.StringVar(&o.work, "work", "", "folder for the static programs (required)")
	flag.StringVar(&o.out, "out", "", "folder of the OCI image layout, replaced (required)")
	flag.StringVar(&o.version, "version", "", `the version: linked into the programs, the image's label and tag (empty: "unknown")`)
	flag.StringVar(&o.commit, "commit", "", `the commit: linked into the programs and the image's revision label (empty: "unknown")`)
	flag.StringVar(&o.source, "source", "https://github.com/ramjet-dev/ramjet", "the image's source label")
	flag.StringVar(&o.caBundle, "ca", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to copy into the image")
	created := flag.Int64("created", 0, "the image's creation time and its files' time, in Unix seconds (SOURCE_DATE_EPOCH)")
	flag.Parse()
	o.created = time.Unix(*created, 0).UTC()
	digest, err := o.run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s:%s (%s) to %s\n", imageName, o.tag(), digest, o.out)
}

// imageName is where the image is published.
const imageName = "ghcr.io/ramjet-dev/ramjet"

// options are what the builder is told.
type options struct {
	module, work, out       string
	version, commit, source string
	caBundle                string
	created                 time.Time
}

// run builds the programs and writes the layout; it returns the image's
// manifest digest.
func (o *options) run() (string, error) {
	if o.work == "" || o.out == "" {
		return "", fmt.Errorf("-work and -out are required")
	}
	if err := checkTag(o.tag()); err != nil {
		return "", fmt.Errorf("-version: %w", err)
	}
	bins, err := buildPrograms(o.module, o.work, o.version, o.commit)
	if err != nil {
		return "", err
	}
	ca, err := readCABundle(o.caBundle)
	if err != nil {
		return "", fmt.Errorf("-ca: %w", err)
	}
	layer := rootFS(bins, ca, o.created)
	img, err := newImage(layer, o.config())
	if err != nil {
		return "", err
	}
	return writeLayout(o.out, img, o.tag())
}

// tag is the version the image is tagged with.
func (o *options) tag() string { return orUnknown(o.version) }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
