package customheaders_test

import (
	"testing"

	"github.com/ramjet-dev/ramjet/test/golden"
)

// TestGolden runs the cases of testdata/ (see package golden; go test
// -update rewrites their expected sections).
func TestGolden(t *testing.T) { golden.Run(t) }
