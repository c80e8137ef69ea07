package main

import (
	"fmt"
	"testing"
)

// BenchmarkRebuild times the steps of a structural rebuild at 500 and 5,000
// routes without a cluster (see rebuildSteps):
//
//	go test -run '^$' -bench Rebuild -benchmem ./test/bench/propagation
func BenchmarkRebuild(b *testing.B) {
	for _, routes := range []int{500, 5000} {
		steps, err := rebuildSteps(routes, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range steps {
			b.Run(fmt.Sprintf("routes=%d/%s", routes, s.name), s.run)
		}
	}
}

// TestRebuildSteps checks that the steps run (about a second each).
func TestRebuildSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("times every step for a second")
	}
	steps, err := rebuildSteps(20, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if r := testing.Benchmark(s.run); r.N == 0 {
				t.Errorf("%s did not run", s.name)
			}
		})
	}
}
