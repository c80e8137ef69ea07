package publish

import (
	"fmt"
	"testing"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// benchConfig is a configuration of n applications, each with one route to
// a pool of its own with three API members, as the controller renders n
// Ingresses.
func benchConfig(n int) *config.Config {
	t := &config.Tenant{Applications: map[string]*config.Application{}, Pools: map[string]*config.Pool{}}
	for i := range n {
		pool := fmt.Sprintf("p_bench_svc%d_80", i)
		t.Applications[fmt.Sprintf("h_r%d_bench_test", i)] = &config.Application{
			Domains: []string{fmt.Sprintf("r%d.bench.test", i)},
			Routes:  []*config.Route{{Match: config.Match{Path: config.PathMatch{Prefix: "/"}}, Action: config.Action{Pool: pool}}},
		}
		t.Pools[pool] = &config.Pool{MembersFrom: config.MembersAPI, Members: []config.Member{
			{Address: fmt.Sprintf("10.0.%d.%d:8080", i/250, i%250)}, {Address: "10.1.0.1:8080"}, {Address: "10.1.0.2:8080"},
		}}
	}
	return &config.Config{
		Server:  config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
		Tenants: map[string]*config.Tenant{core.TenantName: t},
	}
}

// BenchmarkStructureDigest is the digest every rebuild computes, endpoint
// changes included, against rendering the file (what a structural change
// adds):
//
//	go test -run '^$' -bench 'StructureDigest|Marshal' -benchmem ./sources/publish
func BenchmarkStructureDigest(b *testing.B) {
	benchSizes(b, func(cfg *config.Config) error {
		_, err := structureDigest(cfg)
		return err
	})
}

// BenchmarkMarshal renders ramjet.yaml.
func BenchmarkMarshal(b *testing.B) {
	benchSizes(b, func(cfg *config.Config) error {
		_, err := Marshal(cfg)
		return err
	})
}

// benchSizes runs f on configurations of 500 and 5,000 routes.
func benchSizes(b *testing.B, f func(*config.Config) error) {
	for _, n := range []int{500, 5000} {
		cfg := benchConfig(n)
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f(cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
