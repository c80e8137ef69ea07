package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// mustRead returns the bytes of a file under testdata.
func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mustDecode decodes a file under testdata and fails the test on error.
func mustDecode(t testing.TB, name string) *config.Config {
	t.Helper()
	cfg, err := config.Decode(mustRead(t, name))
	if err != nil {
		t.Fatalf("Decode(testdata/%s): unexpected error:\n%v", name, err)
	}
	return cfg
}

// mentionsLine reports whether msg names line n ("line 3", not "line 13" or
// "line 30").
func mentionsLine(msg string, n int) bool {
	return regexp.MustCompile(fmt.Sprintf(`(^|\D)line %d(\D|$)`, n)).MatchString(msg)
}

// fieldErrors returns the FieldErrors of a Validate error, failing the test
// when one of them is something else.
func fieldErrors(t testing.TB, err error) []*config.FieldError {
	t.Helper()
	var out []*config.FieldError
	for _, e := range config.Errors(err) {
		var fe *config.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("Validate returned %T (%v), want *config.FieldError", e, e)
		}
		out = append(out, fe)
	}
	return out
}

// wantErr is one expected FieldError: its exact path and a phrase of its
// message.
type wantErr struct {
	path, phrase string
}

func (w wantErr) String() string { return fmt.Sprintf("%s: …%s…", w.path, w.phrase) }

// checkFieldErrors compares the errors of Validate with want, in order.
func checkFieldErrors(t testing.TB, err error, want []wantErr) {
	t.Helper()
	got := fieldErrors(t, err)
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Path == want[i].path && strings.Contains(got[i].Message, want[i].phrase)
	}
	if ok {
		return
	}
	var g, w strings.Builder
	for _, e := range got {
		fmt.Fprintf(&g, "\n\t%s", e.Error())
	}
	if len(got) == 0 {
		g.WriteString(" no error")
	}
	for _, e := range want {
		fmt.Fprintf(&w, "\n\t%s", e)
	}
	if len(want) == 0 {
		w.WriteString(" no error")
	}
	t.Errorf("Validate:\ngot%s\nwant%s", g.String(), w.String())
}

// equal is reflect.DeepEqual, named for readability of the tables.
func equal(a, b any) bool { return reflect.DeepEqual(a, b) }
