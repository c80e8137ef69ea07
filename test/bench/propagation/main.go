// Command propagation measures how fast `ramjet-ingress run` carries a
// change of the API server to ramjetd (issue 6, "Measure"; DECISIONS.md
// "Change propagation").
//
// It starts the test harness's kube-apiserver and etcd, backends in a
// network namespace, and an ingress pod (ramjetd and the controller with
// its default --debounce), then for every size of -sizes:
//
//   - loads that many routes (one Ingress each, one host and path, over a
//     few shared Services) with the client, concurrently, and waits until
//     ramjetd serves all of them;
//   - times -changes writes from the start of the API call to the first
//     correct answer of ramjetd (polled every -poll with the new Host):
//     new Ingresses and backend updates spaced by more than the debounce
//     window (lone changes), and new Ingresses written back to back (each as
//     soon as the previous one answered) to show the coalescing cost;
//   - rolls a 50-endpoint Service, replacing one address at a time in its
//     EndpointSlice, and counts ramjetd's reloads (its admin generation)
//     and times each member update (write to the new member in ramjetd's
//     admin API);
//   - reads the controller's per-rebuild timings from its debug log, its
//     publish latency histogram, and the resident memory of every process.
//
// It prints a Markdown report, also written to -out. Run it as root from the
// module (test/bench/controller.sh does): the harness needs network
// namespaces and builds ramjetd and ramjet-ingress from the module.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	sizes          []int
	changes        int
	endpoints      int
	poll           time.Duration
	debounce       time.Duration // 0: the controller's default
	gap            time.Duration
	workers        int
	answerTimeout  time.Duration
	out, logs      string
	steps          bool
	controllerArgs []string
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "propagation:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	report, err := run(ctx, opts)
	if report != "" {
		fmt.Print(report)
		if opts.out != "" {
			if werr := os.WriteFile(opts.out, []byte(report), 0o644); werr != nil {
				err = errors.Join(err, werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "propagation:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("propagation", flag.ContinueOnError)
	var o options
	sizes := fs.String("sizes", "0,500,5000", "comma-separated numbers of routes (Ingresses) loaded before each measurement, ascending")
	fs.IntVar(&o.changes, "changes", 50, "changes timed per series")
	fs.IntVar(&o.endpoints, "endpoints", 50, "endpoints of the rolled Service (at most 75)")
	fs.DurationVar(&o.poll, "poll", 5*time.Millisecond, "interval between two requests to ramjetd while waiting for an answer")
	fs.DurationVar(&o.debounce, "debounce", 0, "--debounce of the controller; 0 keeps its default (200ms)")
	fs.DurationVar(&o.gap, "gap", 0, "wait between lone changes; 0: the debounce window plus 100ms")
	fs.IntVar(&o.workers, "workers", 8, "concurrent API calls while loading routes")
	fs.DurationVar(&o.answerTimeout, "timeout", 30*time.Second, "how long one change may take before it counts as failed")
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this file")
	fs.StringVar(&o.logs, "logs", "", "copy the logs of ramjet-ingress and ramjetd into this folder at the end")
	fs.BoolVar(&o.steps, "steps", true, "also time the steps of a rebuild without a cluster (about 15 s per size)")
	extra := fs.String("controller-args", "", "more flags for ramjet-ingress run, space-separated")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for s := range strings.SplitSeq(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return o, fmt.Errorf("-sizes: %q is not a number of routes", s)
		}
		o.sizes = append(o.sizes, n)
	}
	switch {
	case !slices.IsSorted(o.sizes):
		return o, errors.New("-sizes must be ascending (routes are added, never removed)")
	case o.changes < 1:
		return o, errors.New("-changes must be at least 1")
	case o.endpoints < 1 || o.endpoints > 75:
		return o, errors.New("-endpoints must be between 1 and 75 (two sets share a /24 with the backends)")
	case o.poll <= 0 || o.workers < 1 || o.answerTimeout <= 0 || o.debounce < 0 || o.gap < 0:
		return o, errors.New("-poll, -workers and -timeout must be above 0, -debounce and -gap 0 or more")
	}
	if o.debounce > 0 {
		o.controllerArgs = append(o.controllerArgs, "--debounce", o.debounce.String())
	} else {
		o.debounce = 200 * time.Millisecond // ramjet-ingress run's default
	}
	if o.gap == 0 {
		o.gap = o.debounce + 100*time.Millisecond
	}
	o.controllerArgs = append(o.controllerArgs, strings.Fields(*extra)...)
	return o, nil
}
