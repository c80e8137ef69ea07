package canary_test

import (
	"testing"

	"github.com/ramjet-dev/ramjet/test/golden"
)

// TestGolden runs the canary cases of testdata/ (go test -update rewrites
// their expected sections).
func TestGolden(t *testing.T) { golden.Run(t) }
