package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCRILog(t *testing.T) {
	dir := t.TempDir()
	plain, cri := filepath.Join(dir, "c.log"), filepath.Join(dir, "c.cri.log")
	l, stdout, stderr, err := openCRILog(plain, cri)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", criChunk+10)
	_, _ = stdout.WriteString("one\n" + long + "\n")
	_, _ = stderr.WriteString("two\n")
	stdout.Close()
	stderr.Close()
	l.wg.Wait()
	l.wait()

	gotPlain, _ := os.ReadFile(plain)
	if want := "one\n" + long + "\ntwo\n"; len(gotPlain) != len(want) {
		t.Errorf("plain log has %d bytes, want %d", len(gotPlain), len(want))
	}
	data, _ := os.ReadFile(cri)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	line := regexp.MustCompile(`^(\S+) (stdout|stderr) ([FP]) (.*)$`)
	var got []string
	for _, s := range lines {
		m := line.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("not a CRI log line: %.80q", s)
		}
		if _, err := time.Parse(time.RFC3339Nano, m[1]); err != nil {
			t.Errorf("time of %.80q: %v", s, err)
		}
		got = append(got, m[2]+" "+m[3]+" "+strings.ReplaceAll(m[4], long[:criChunk], "X"))
	}
	// The streams are copied side by side: only each one's order is kept.
	var out, errs []string
	for _, g := range got {
		if strings.HasPrefix(g, "stdout") {
			out = append(out, g)
		} else {
			errs = append(errs, g)
		}
	}
	if want := []string{"stdout F one", "stdout P X", "stdout F " + long[:10]}; strings.Join(out, "|") != strings.Join(want, "|") {
		t.Errorf("stdout lines %q, want %q", out, want)
	}
	if want := []string{"stderr F two"}; strings.Join(errs, "|") != strings.Join(want, "|") {
		t.Errorf("stderr lines %q, want %q", errs, want)
	}
}
