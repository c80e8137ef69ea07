package main

import (
	"context"
	"os"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/publish"
)

// costs are the parts of the structure phase timed one by one on the
// configuration the controller last wrote (medians of costRuns): rendering
// it (what the publisher does when the structure changed), decoding and
// validating it (what ramjetd does first on a reload), and a whole reload
// of ramjetd.
type costs struct {
	fileBytes                int
	render, decode, validate time.Duration
	reload                   time.Duration
	err                      error // the first failure
}

const costRuns = 5

// measureCosts times the parts. The reloads load the same file again: they
// raise ramjetd's generation and change nothing it serves.
func (b *bench) measureCosts(ctx context.Context) costs {
	var c costs
	data, err := os.ReadFile(b.ramjet.Config)
	if err != nil {
		c.err = err
		return c
	}
	c.fileBytes = len(data)
	var cfg *config.Config
	c.decode = median(func() {
		if cfg, err = config.Decode(data); err != nil {
			c.fail(err)
		}
	})
	if cfg == nil {
		return c
	}
	c.validate = median(func() {
		if err := cfg.Validate(); err != nil {
			c.fail(err)
		}
	})
	c.render = median(func() {
		if _, err := publish.Marshal(cfg); err != nil {
			c.fail(err)
		}
	})
	c.reload = median(func() {
		if _, err := b.admin.Reload(ctx); err != nil {
			c.fail(err)
		}
	})
	return c
}

func (c *costs) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// median runs f costRuns times and returns the median duration.
func median(f func()) time.Duration {
	d := make([]time.Duration, costRuns)
	for i := range d {
		start := time.Now()
		f()
		d[i] = time.Since(start)
	}
	return percentile(d, 0.5)
}
