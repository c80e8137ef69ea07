package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// bench is the state of a benchmark: its run folder, certificate,
// backend and meter.
type bench struct {
	opts    options
	dir     string
	cert    certFiles
	files   map[string][]byte // the backend's files by path (/1k, /100k)
	backend configData        // Backend is its port
	meter   *meter
}

// trial is one repetition of one cell for one contender.
type trial struct {
	full, fixed sample
	hwmKiB      int64 // peak resident set of the proxy's processes
}

// progress is a line about t for the terminal.
func (t trial) progress() string {
	return fmt.Sprintf("%s req/s, %s µs/req, core %.2f, background %.2f | fixed %s req/s: p99 %s, %s µs/req",
		number(t.full.rps), number(t.full.cpuPerRequest()), t.full.util(), t.full.background,
		number(t.fixed.rps), percentile(t.fixed.latency, 0.99), number(t.fixed.cpuPerRequest()))
}

// runOne starts a fresh contender, checks that it answers correctly,
// warms it up, runs both passes and stops it.
func (b *bench) runOne(ctx context.Context, k contender, c cell) (trial, error) {
	d := b.backend
	d.Auth = c.auth
	d.Passthrough = c.passthrough
	var err error
	if d.HTTP, err = freePort(); err != nil {
		return trial{}, err
	}
	if d.HTTPS, err = freePort(); err != nil {
		return trial{}, err
	}
	config, err := writeConfig(k.config, d, k.file)
	if err != nil {
		return trial{}, err
	}
	p, err := startProcess(k.name, 0, k.argv(config, d), k.env, filepath.Join(b.dir, k.name+".log"))
	if err != nil {
		return trial{}, err
	}
	defer p.stop()
	port := d.HTTP
	if c.tls {
		port = d.HTTPS
	}
	if err := p.waitPort(port, 10*time.Second); err != nil {
		return trial{}, err
	}
	url := c.url(d.HTTP, d.HTTPS)
	if err := check(ctx, c, url, b.files[c.path], b.cert); err != nil {
		return trial{}, p.failure(fmt.Errorf("before measuring: %w", err))
	}
	if _, err := b.meter.pass(ctx, p.pid(), c.fullLoad(url, b.opts.conns, b.opts.warmup)); err != nil {
		return trial{}, p.failure(fmt.Errorf("warm-up: %w", err))
	}
	var r trial
	if r.full, err = b.meter.pass(ctx, p.pid(), c.fullLoad(url, b.opts.conns, b.opts.duration)); err != nil {
		return trial{}, p.failure(err)
	}
	logFile := filepath.Join(b.dir, "latency.log")
	if r.fixed, err = b.meter.pass(ctx, p.pid(), c.fixedRate(url, b.opts.rateDuration, logFile)); err != nil {
		return trial{}, p.failure(err)
	}
	if err := r.fixed.latencies(logFile); err != nil {
		return trial{}, err
	}
	u, err := treeUsage(b.meter.proc, p.pid())
	if err != nil {
		return trial{}, p.failure(err)
	}
	r.hwmKiB = u.hwmKiB
	return r, nil
}

// freePort is a port on 127.0.0.1 nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeDocroot writes the backend's files, 1 KiB and 100 KiB of
// printable bytes, and returns them by path.
func writeDocroot(dir string) (map[string][]byte, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[string][]byte{"/1k": pattern(1 << 10), "/100k": pattern(100 << 10)}
	for path, data := range files {
		if err := os.WriteFile(dir+path, data, 0o644); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// pattern is n bytes cycling through the alphabet.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}
