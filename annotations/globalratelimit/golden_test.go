package globalratelimit_test

import (
	"testing"

	"github.com/ramjet-dev/ramjet/test/golden"
)

func TestGolden(t *testing.T) { golden.Run(t) }
