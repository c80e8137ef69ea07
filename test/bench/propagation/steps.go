package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all" // the annotation families, as in ramjet-ingress
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/daemon"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	ingresses "github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/publish"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// step is one step of a structural rebuild, timed without a cluster on the
// routes the program loads.
type step struct {
	name string
	run  func(b *testing.B)
}

// stepResult is a step's benchmark.
type stepResult struct {
	routes int
	name   string
	testing.BenchmarkResult
}

// rebuildSteps returns the steps of a structural rebuild at routes routes:
// translate (sources.Translate), render (publish.Marshal, when the
// structure changed), decode and validate (ramjetd's first steps on a
// reload) and reload (daemon.Reload: read, decode, validate, compile,
// swap). dir receives ramjet.yaml.
func rebuildSteps(routes int, dir string) ([]step, error) {
	snap := routesSnapshot(routes)
	base := &config.Server{Listeners: map[string]*config.Listener{
		"http":  {Address: "127.0.0.1:0"},
		"https": {Address: "127.0.0.1:0", TLS: &config.ListenerTLS{}},
	}}
	sel, err := registry.Select("all")
	if err != nil {
		return nil, err
	}
	opts := sources.Options{Inputs: []input.Input{&ingresses.Input{Options: ingresses.Options{
		IngressClass: ingresses.DefaultIngressClass, ControllerClass: ingresses.DefaultControllerClass, Annotations: sel,
	}}}}
	opts.Core.FileDir = dir
	out := sources.Translate(snap, base, opts)
	if out.Config == nil || len(out.Findings) > 0 {
		return nil, fmt.Errorf("%d routes: the translation failed: %s", routes, out.Summary())
	}
	data, err := publish.Marshal(out.Config)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "ramjet.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	cfg, err := config.Decode(data)
	if err != nil {
		return nil, err
	}
	d, err := daemon.New(daemon.Options{ConfigPath: path, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	return []step{
		{"translate", func(b *testing.B) {
			for b.Loop() {
				sources.Translate(snap, base, opts)
			}
		}},
		{"render", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := publish.Marshal(out.Config); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"decode", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := config.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"validate", func(b *testing.B) {
			for b.Loop() {
				if err := cfg.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"ramjetd reload", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := d.Reload(); err != nil {
					b.Fatal(err)
				}
			}
		}},
	}, nil
}

// benchmarkSteps runs the steps of every size above 0.
func benchmarkSteps(sizes []int, progress func(string, ...any)) ([]stepResult, error) {
	var results []stepResult
	for _, routes := range sizes {
		if routes == 0 {
			continue
		}
		dir, err := os.MkdirTemp("", "rjsteps")
		if err != nil {
			return results, err
		}
		steps, err := rebuildSteps(routes, dir)
		if err != nil {
			os.RemoveAll(dir)
			return results, err
		}
		progress("timing the steps of a rebuild at %d routes, without a cluster", routes)
		for _, s := range steps {
			r := testing.Benchmark(func(b *testing.B) {
				b.ReportAllocs()
				s.run(b)
			})
			results = append(results, stepResult{routes: routes, name: s.name, BenchmarkResult: r})
		}
		os.RemoveAll(dir)
	}
	return results, nil
}

// routesSnapshot is what the controller's caches hold after the program
// loaded routes routes: the IngressClass, the shared Services with one
// endpoint each, and one Ingress per route.
func routesSnapshot(routes int) *snapshot.Snapshot {
	snap := snapshot.New()
	snap.Add(ingressClass())
	for i := range services {
		snap.Add(harness.Service(namespace, serviceName(i), 80, harness.BackendPort))
		snap.Add(harness.EndpointSlice(namespace, serviceName(i), harness.BackendPort, fmt.Sprintf("198.18.0.%d", 2+i)))
	}
	for i := range routes {
		snap.Add(ingress(routeName(i), routeHost(i), serviceName(i%services)))
	}
	return snap
}
