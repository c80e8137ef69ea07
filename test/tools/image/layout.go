package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platform is the only platform the image is built for.
var platform = v1.Platform{OS: "linux", Architecture: "amd64"}

// config is the image's configuration, as the chart's pod expects it:
// ramjetd serving the generated configuration, as nonroot.
func (o *options) config() *v1.ConfigFile {
	return &v1.ConfigFile{
		Architecture: platform.Architecture,
		OS:           platform.OS,
		Created:      v1.Time{Time: o.created},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       user,
			Entrypoint: []string{"/" + binDir + "ramjetd"},
			Cmd:        []string{"--config", "/etc/ramjet/generated/ramjet.yaml"},
			WorkingDir: "/",
			Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/" + caBundle},
			Labels: map[string]string{
				"org.opencontainers.image.version":  o.tag(),
				"org.opencontainers.image.revision": orUnknown(o.commit),
				"org.opencontainers.image.source":   o.source,
			},
		},
	}
}

// newImage is an OCI image of one layer (the tar rootFS made) with cfg.
func newImage(rootFS []byte, cfg *v1.ConfigFile) (v1.Image, error) {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(rootFS)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("the layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.ConfigFile(base, cfg)
	if err != nil {
		return nil, fmt.Errorf("the config: %w", err)
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: cfg.Created, CreatedBy: "make image (test/tools/image)"},
	})
}

// writeLayout replaces the folder out with an OCI image layout holding
// img, tagged tag, and returns the manifest's digest.
func writeLayout(out string, img v1.Image, tag string) (string, error) {
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	path, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tmp, err)
	}
	err = path.AppendImage(img,
		layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag}),
		layout.WithPlatform(platform))
	if err != nil {
		return "", fmt.Errorf("%s: %w", tmp, err)
	}
	if err := os.RemoveAll(out); err != nil {
		return "", err
	}
	return digest.String(), os.Rename(tmp, out)
}

// tagPattern is what a tag may be (the OCI distribution spec).
var tagPattern = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// checkTag refuses a version that cannot tag an image.
func checkTag(tag string) error {
	if !tagPattern.MatchString(tag) {
		return fmt.Errorf("%q cannot tag an image: want letters, digits, '_', '.' and '-', at most 128", tag)
	}
	return nil
}
