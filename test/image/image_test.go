// Package image_test builds the container image as `make image` does
// (the builder in test/tools/image) and reads it back with the standard
// library only: the layout's index, manifest, config and layer, each
// blob's digest and size, and what the chart's pod relies on (the user,
// the entrypoint, both programs, the CA bundle, nothing writable or
// setuid).
package image_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"debug/elf"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What the test tells the builder.
const (
	testVersion = "v9.8.7-3-gabcdef0-dirty"
	testCommit  = "abcdef0123456789abcdef0123456789abcdef01"
	testCreated = 1700000000
)

// file is one entry of the image's layer.
type file struct {
	header *tar.Header
	data   []byte
}

// image is what the test reads back of one build.
type image struct {
	digest string
	config imageConfig
	files  []file
}

func TestImage(t *testing.T) {
	dir := t.TempDir()
	ca := writeTestCA(t, dir)
	img := readImage(t, buildImage(t, dir, ca, "image"))

	t.Run("config", func(t *testing.T) {
		c := img.config
		checks := []struct {
			name      string
			got, want any
		}{
			{"platform", c.OS + "/" + c.Architecture, "linux/amd64"},
			{"User", c.Config.User, "65532:65532"},
			{"Entrypoint", c.Config.Entrypoint, []string{"/usr/local/bin/ramjetd"}},
			{"Cmd", c.Config.Cmd, []string{"--config", "/etc/ramjet/generated/ramjet.yaml"}},
			{"WorkingDir", c.Config.WorkingDir, "/"},
			{"version label", c.Config.Labels["org.opencontainers.image.version"], testVersion},
			{"revision label", c.Config.Labels["org.opencontainers.image.revision"], testCommit},
			{"source label", c.Config.Labels["org.opencontainers.image.source"], "https://github.com/ramjet-dev/ramjet"},
		}
		for _, check := range checks {
			if !reflect.DeepEqual(check.got, check.want) {
				t.Errorf("%s: got %q, want %q", check.name, check.got, check.want)
			}
		}
	})
	t.Run("every entry owned by root, writable by root only, no device", func(t *testing.T) {
		for _, f := range img.files {
			for _, problem := range entryProblems(f.header) {
				t.Errorf("%s: %s", f.header.Name, problem)
			}
		}
	})
	t.Run("entries sorted, dated, their folders first", func(t *testing.T) {
		seen := map[string]bool{}
		for i, f := range img.files {
			name := f.header.Name
			if i > 0 && img.files[i-1].header.Name >= name {
				t.Errorf("%s comes after %s: want the entries sorted", name, img.files[i-1].header.Name)
			}
			if !f.header.ModTime.Equal(time.Unix(testCreated, 0)) {
				t.Errorf("%s: dated %v, want %v", name, f.header.ModTime.UTC(), time.Unix(testCreated, 0).UTC())
			}
			if parent := filepath.Dir(strings.TrimSuffix(name, "/")) + "/"; parent != "./" && !seen[parent] {
				t.Errorf("%s comes before its folder %s", name, parent)
			}
			seen[name] = true
		}
	})
	t.Run("files", func(t *testing.T) {
		caPEM, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []struct {
			name     string
			mode     int64
			contains []byte
		}{
			{"etc/ssl/certs/ca-certificates.crt", 0o644, caPEM},
			{"etc/passwd", 0o644, []byte("\nnonroot:x:65532:65532:")},
			{"etc/group", 0o644, []byte("\nnonroot:x:65532:\n")},
			{"usr/local/bin/ramjetd", 0o555, []byte("\x7fELF")},
			{"usr/local/bin/ramjet-ingress", 0o555, []byte("\x7fELF")},
			{"etc/ramjet/generated/", 0o755, nil},
			{"run/ramjet/", 0o755, nil},
		} {
			f, ok := find(img.files, want.name)
			switch {
			case !ok:
				t.Errorf("%s: missing", want.name)
			case f.header.Mode != want.mode:
				t.Errorf("%s: mode %o, want %o", want.name, f.header.Mode, want.mode)
			case !bytes.Contains(f.data, want.contains):
				t.Errorf("%s: %.200q does not hold %.200q", want.name, f.data, want.contains)
			}
		}
	})
	t.Run("programs are static and run", func(t *testing.T) {
		binDir := t.TempDir()
		for _, name := range []string{"ramjetd", "ramjet-ingress"} {
			f, ok := find(img.files, "usr/local/bin/"+name)
			if !ok {
				t.Fatalf("%s: missing", name)
			}
			if interp := interpreter(t, f.data); interp != "" {
				t.Errorf("%s is linked dynamically (interpreter %s), want static", name, interp)
			}
			path := filepath.Join(binDir, name)
			if err := os.WriteFile(path, f.data, os.FileMode(f.header.Mode)); err != nil {
				t.Fatal(err)
			}
			want := name + " " + testVersion + " (commit " + testCommit + ", " + runtime.Version() + ")\n"
			if out, err := exec.Command(path, "--version").CombinedOutput(); err != nil || string(out) != want {
				t.Errorf("%s --version: %v\ngot  %q\nwant %q", name, err, out, want)
			}
		}
	})
	t.Run("the same inputs give the same digest", func(t *testing.T) {
		// The first build's blobs were checked; the digest of the
		// manifest covers the config and the layer.
		again, err := ociLayout{buildImage(t, dir, ca, "again")}.index()
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Manifests) != 1 || again.Manifests[0].Digest != img.digest {
			t.Errorf("a second build is %+v, the first %s", again.Manifests, img.digest)
		}
	})
}

// TestEntryProblems checks that the checks of the layer's entries catch
// each kind of entry the image must not hold.
func TestEntryProblems(t *testing.T) {
	ok := tar.Header{Name: "usr/local/bin/ramjetd", Typeflag: tar.TypeReg, Mode: 0o555}
	for _, tc := range []struct {
		name   string
		change func(h *tar.Header)
		want   []string
	}{
		{"a program of root", func(h *tar.Header) {}, nil},
		{"a folder of root", func(h *tar.Header) { h.Typeflag, h.Mode = tar.TypeDir, 0o755 }, nil},
		{"writable by anyone", func(h *tar.Header) { h.Mode = 0o777 }, []string{"mode 777 lets others than root write"}},
		{"writable by its group", func(h *tar.Header) { h.Mode = 0o575 }, []string{"mode 575 lets others than root write"}},
		{"setuid", func(h *tar.Header) { h.Mode = 0o4555 }, []string{"mode 4555 is setuid or setgid"}},
		{"setgid", func(h *tar.Header) { h.Mode = 0o2555 }, []string{"mode 2555 is setuid or setgid"}},
		{"owned by nonroot", func(h *tar.Header) { h.Uid = 65532 }, []string{"owned by 65532:0, want 0:0"}},
		{"group nonroot", func(h *tar.Header) { h.Gid = 65532 }, []string{"owned by 0:65532, want 0:0"}},
		{"a character device", func(h *tar.Header) { h.Typeflag = tar.TypeChar }, []string{"type '3', want a file or a folder"}},
		{"a block device", func(h *tar.Header) { h.Typeflag = tar.TypeBlock }, []string{"type '4', want a file or a folder"}},
		{"a link", func(h *tar.Header) { h.Typeflag = tar.TypeSymlink }, []string{"type '2', want a file or a folder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := ok
			tc.change(&h)
			if got := entryProblems(&h); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// entryProblems says what is wrong with an entry of the image's layer.
func entryProblems(h *tar.Header) []string {
	var problems []string
	if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeDir {
		problems = append(problems, fmt.Sprintf("type %q, want a file or a folder", h.Typeflag))
	}
	if h.Uid != 0 || h.Gid != 0 {
		problems = append(problems, fmt.Sprintf("owned by %d:%d, want 0:0", h.Uid, h.Gid))
	}
	if h.Mode&0o6000 != 0 {
		problems = append(problems, fmt.Sprintf("mode %o is setuid or setgid", h.Mode))
	}
	if h.Mode&0o022 != 0 {
		problems = append(problems, fmt.Sprintf("mode %o lets others than root write", h.Mode))
	}
	return problems
}

// buildImage runs the image builder as `make image` does, into dir/name,
// and returns the layout's folder. The programs are built in the
// repository's .cache/image-test, where go build links them again only
// when they changed.
func buildImage(t *testing.T, dir, ca, name string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	work := filepath.Join(root, ".cache", "image-test")
	cmd := exec.Command("go", "run", ".", "-module", root, "-work", work, "-out", out,
		"-version", testVersion, "-commit", testCommit, "-created", strconv.Itoa(testCreated), "-ca", ca)
	cmd.Dir = filepath.Join(root, "test", "tools", "image")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the image builder: %v\n%s", err, output)
	}
	return out
}

// readImage reads the layout's one image, checking every blob.
func readImage(t *testing.T, dir string) image {
	t.Helper()
	l := ociLayout{dir}
	idx, err := l.index()
	if err != nil {
		t.Fatal(err)
	}
	if idx.SchemaVersion != 2 || idx.MediaType != indexType || len(idx.Manifests) != 1 {
		t.Fatalf("index.json: schema %d, media type %q, %d manifests; want 2, %q, one", idx.SchemaVersion, idx.MediaType, len(idx.Manifests), indexType)
	}
	desc := idx.Manifests[0]
	if tag := desc.Annotations["org.opencontainers.image.ref.name"]; tag != testVersion {
		t.Errorf("index.json: the image is tagged %q, want %q", tag, testVersion)
	}
	if p := desc.Platform; p == nil || p.OS != "linux" || p.Architecture != "amd64" {
		t.Errorf("index.json: platform %+v, want linux/amd64", p)
	}
	var m manifest
	if err := l.blobJSON(desc, manifestType, &m); err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != 2 || m.MediaType != manifestType || len(m.Layers) != 1 {
		t.Fatalf("manifest: schema %d, media type %q, %d layers; want 2, %q, one", m.SchemaVersion, m.MediaType, len(m.Layers), manifestType)
	}
	img := image{digest: desc.Digest}
	if err := l.blobJSON(m.Config, configType, &img.config); err != nil {
		t.Fatal(err)
	}
	compressed, err := l.blob(m.Layers[0], layerType)
	if err != nil {
		t.Fatal(err)
	}
	layer := gunzip(t, compressed)
	if want := []string{sha256Digest(layer)}; img.config.RootFS.Type != "layers" || !reflect.DeepEqual(img.config.RootFS.DiffIDs, want) {
		t.Errorf("config rootfs: %q %q, want layers %q", img.config.RootFS.Type, img.config.RootFS.DiffIDs, want)
	}
	img.files = untar(t, layer)
	return img
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the layer: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the layer: %v", err)
	}
	return out
}

func untar(t *testing.T, data []byte) []file {
	t.Helper()
	var files []file
	r := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("the layer's tar: %v", err)
		}
		body, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("the layer's tar, %s: %v", h.Name, err)
		}
		files = append(files, file{header: h, data: body})
	}
}

func find(files []file, name string) (file, bool) {
	for _, f := range files {
		if f.header.Name == name {
			return f, true
		}
	}
	return file{}, false
}

// interpreter returns the dynamic loader an ELF program names, or "" for
// a static program.
func interpreter(t *testing.T, program []byte) string {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		t.Fatalf("not an ELF program: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			data, _ := io.ReadAll(p.Open())
			return strings.TrimRight(string(data), "\x00")
		}
	}
	return ""
}

// writeTestCA writes a PEM bundle of one self-signed CA certificate into
// dir and returns its path: the builder copies it as the image's bundle.
func writeTestCA(t *testing.T, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "image test CA"},
		NotBefore: time.Unix(testCreated, 0), NotAfter: time.Unix(testCreated, 0).AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
