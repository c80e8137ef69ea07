package layout

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository tracks outside
// testdata/ folders: anything larger is build output or data that belongs
// in .cache/.
const maxTrackedBytes = 1 << 20

// TestNoBuiltBinariesTracked fails when git tracks an executable binary
// anywhere, or a file over 1 MiB outside testdata/: built programs go to
// .cache/ (git-ignored), and .gitignore does not untrack a file committed
// before it was listed.
func TestNoBuiltBinariesTracked(t *testing.T) {
	root := repositoryRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files; the check would pass without checking", len(files))
	}
	for _, name := range files {
		if problem := trackedFileProblem(filepath.Join(root, name), name); problem != "" {
			t.Errorf("%s: %s (git rm --cached it; build output belongs in .cache/)", name, problem)
		}
	}
}

// trackedFileProblem says what is wrong with the tracked file at path (name
// relative to the repository's root), or returns "".
func trackedFileProblem(path, name string) string {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return "" // deleted in the work tree, or a symbolic link
	}
	f, err := os.Open(path)
	if err != nil {
		return "cannot be read: " + err.Error()
	}
	defer f.Close()
	head := make([]byte, 8<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "cannot be read: " + err.Error()
	}
	head = head[:n]
	switch {
	case isExecutableFormat(head):
		return "is an executable binary"
	case info.Mode()&0o111 != 0 && bytes.IndexByte(head, 0) >= 0:
		return "is executable and not text"
	case info.Size() > maxTrackedBytes && !inTestdata(name):
		return "is larger than 1 MiB outside testdata/"
	}
	return ""
}

// isExecutableFormat reports whether head starts like a program: ELF,
// Mach-O (both byte orders, fat binaries) or a Windows PE file.
func isExecutableFormat(head []byte) bool {
	for _, magic := range [][]byte{
		[]byte("\x7fELF"),
		{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
		{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
		{0xca, 0xfe, 0xba, 0xbe},
	} {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	return len(head) >= 64 && bytes.HasPrefix(head, []byte("MZ")) && bytes.Contains(head, []byte("PE\x00\x00"))
}

func inTestdata(name string) bool {
	return strings.HasPrefix(name, "testdata/") || strings.Contains(name, "/testdata/")
}

// repositoryRoot returns the root of the git work tree holding this test.
func repositoryRoot(t *testing.T) string {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse --show-toplevel: %v (the check needs a git checkout)", err)
	}
	return strings.TrimSpace(string(out))
}
