package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"fmt"
	"os"
	"sort"
	"time"
)

// The user and group the image runs as.
const (
	nonrootID = 65532
	user      = "65532:65532"
)

// Paths in the image.
const (
	binDir   = "usr/local/bin/"
	caBundle = "etc/ssl/certs/ca-certificates.crt"
)

// passwd and group name root, nobody and nonroot, as distroless does; no
// account has a shell or a home that exists.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

// folders are the image's directories: the parents of its files, and the
// mount points of the pod (the generated configuration, the base
// configuration and the admin socket's folder), so that none is made by
// the runtime.
var folders = []string{
	"etc/", "etc/ramjet/", "etc/ramjet/base/", "etc/ramjet/generated/",
	"etc/ssl/", "etc/ssl/certs/",
	"run/", "run/ramjet/",
	"usr/", "usr/local/", "usr/local/bin/",
}

// entry is one file or directory of the layer.
type entry struct {
	name string
	mode int64
	data []byte // nil for a directory
}

// rootFS is the image's only layer, an uncompressed tar: every entry owned
// by root, writable by root only, dated mtime, sorted by name.
func rootFS(bins map[string][]byte, ca []byte, mtime time.Time) []byte {
	entries := []entry{
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: caBundle, mode: 0o644, data: ca},
	}
	for _, dir := range folders {
		entries = append(entries, entry{name: dir, mode: 0o755})
	}
	for name, data := range bins {
		entries = append(entries, entry{name: binDir + name, mode: 0o555, data: data})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		// Writes to a bytes.Buffer cannot fail.
		tw.WriteHeader(h)
		tw.Write(e.data)
	}
	tw.Close()
	return buf.Bytes()
}

// readCABundle reads a PEM bundle of CA certificates and checks that it
// holds at least one.
func readCABundle(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (apt-get install ca-certificates)", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return data, nil
}
