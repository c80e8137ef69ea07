package image_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The media types of an OCI image.
const (
	indexType    = "application/vnd.oci.image.index.v1+json"
	manifestType = "application/vnd.oci.image.manifest.v1+json"
	configType   = "application/vnd.oci.image.config.v1+json"
	layerType    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// descriptor points at a blob of the layout.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

// index is index.json; manifest is an image manifest.
type (
	index struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []descriptor `json:"manifests"`
	}
	manifest struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Config        descriptor   `json:"config"`
		Layers        []descriptor `json:"layers"`
	}
)

// imageConfig is the part of an image's configuration the pod relies on.
type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		WorkingDir string            `json:"WorkingDir"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// ociLayout reads an OCI image layout folder.
type ociLayout struct{ dir string }

// index reads index.json after checking the oci-layout file.
func (l ociLayout) index() (index, error) {
	var marker struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := readJSON(filepath.Join(l.dir, "oci-layout"), &marker); err != nil {
		return index{}, err
	}
	if marker.Version != "1.0.0" {
		return index{}, fmt.Errorf("oci-layout: imageLayoutVersion %q, want 1.0.0", marker.Version)
	}
	var idx index
	return idx, readJSON(filepath.Join(l.dir, "index.json"), &idx)
}

// blob reads the blob d points at, checking its media type, size and
// sha256 digest.
func (l ociLayout) blob(d descriptor, mediaType string) ([]byte, error) {
	if d.MediaType != mediaType {
		return nil, fmt.Errorf("%s: media type %q, want %q", d.Digest, d.MediaType, mediaType)
	}
	hash, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok || len(hash) != 64 || strings.ContainsAny(hash, "/.") {
		return nil, fmt.Errorf("digest %q: want sha256: and 64 hex digits", d.Digest)
	}
	data, err := os.ReadFile(filepath.Join(l.dir, "blobs", "sha256", hash))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != d.Size {
		return nil, fmt.Errorf("%s: %d bytes, the descriptor says %d", d.Digest, len(data), d.Size)
	}
	if got := sha256Digest(data); got != d.Digest {
		return nil, fmt.Errorf("%s: the blob's digest is %s", d.Digest, got)
	}
	return data, nil
}

// blobJSON reads and decodes the blob d points at.
func (l ociLayout) blobJSON(d descriptor, mediaType string, v any) error {
	data, err := l.blob(d, mediaType)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", d.Digest, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
