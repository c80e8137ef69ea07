package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// progress writes the demo's steps to standard output. On a terminal the
// step running has a live line with the time it has taken so far; else a
// line every progressEvery says it is still running.
type progress struct {
	out io.Writer
	tty bool

	mu     sync.Mutex
	status string // the live line on a terminal, "" when none is shown
}

// buildEstimates say how long test/tools/build.sh takes for each program
// the first time (two cores).
var buildEstimates = map[string]string{
	"kube-apiserver": "about ten minutes the first time on two cores",
	"kubectl":        "a few minutes the first time",
	"etcd":           "a minute or two the first time",
	"helm":           "a few minutes the first time",
}

// progressEvery is how often a step still running says so when the output
// is not a terminal (a log, a CI job).
var progressEvery = 30 * time.Second

func newProgress() *progress {
	_, err := unix.IoctlGetTermios(int(os.Stdout.Fd()), unix.TCGETS)
	return &progress{out: os.Stdout, tty: err == nil}
}

// bold returns s in bold on a terminal.
func (p *progress) bold(s string) string {
	if !p.tty {
		return s
	}
	return "\033[1m" + s + "\033[0m"
}

// printf writes a line of its own, above the live line if there is one.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearStatus()
	fmt.Fprintf(p.out, format, args...)
	p.drawStatus()
}

func (p *progress) clearStatus() {
	if p.tty && p.status != "" {
		fmt.Fprint(p.out, "\r\033[K")
	}
}

func (p *progress) drawStatus() {
	if p.tty && p.status != "" {
		fmt.Fprint(p.out, p.status)
	}
}

// setStatus replaces the live line (terminal only), cut to the terminal's
// width: a line that wrapped could not be rewritten.
func (p *progress) setStatus(s string) {
	if !p.tty {
		return
	}
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 1 {
		if r := []rune(s); len(r) >= int(ws.Col) {
			s = string(r[:ws.Col-1])
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearStatus()
	p.status = s
	p.drawStatus()
}

// step runs fn as one step of the demo: its title first, then, while it
// runs, the time it has taken and hint (what to expect, such as how long it
// usually takes); the lines fn passes to note are written under the title.
// It ends with the step's duration, or its error.
func (p *progress) step(title, hint string, fn func(note func(string)) error) error {
	p.printf("%s %s\n", p.bold("==>"), title)
	start := time.Now()
	var hintMu sync.Mutex
	current := hint
	note := func(line string) {
		// A note "building X from ..." of test/tools/build.sh names what
		// the step is busy with: the live line says so.
		if what, ok := strings.CutPrefix(line, "building "); ok {
			if name, _, ok := strings.Cut(what, " from "); ok {
				hintMu.Lock()
				current = name
				if est, ok := buildEstimates[name]; ok {
					current += ": " + est
				}
				hintMu.Unlock()
			}
		}
		p.printf("    %s\n", line)
	}
	done := make(chan struct{})
	ticker := time.NewTicker(time.Second)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer ticker.Stop()
		last := start
		for {
			select {
			case <-done:
				return
			case now := <-ticker.C:
				hintMu.Lock()
				h := current
				hintMu.Unlock()
				elapsed := now.Sub(start).Round(time.Second)
				if p.tty {
					p.setStatus(fmt.Sprintf("    … %s%s", elapsed, suffix(h)))
				} else if now.Sub(last) >= progressEvery {
					last = now
					p.printf("    still running after %s%s\n", elapsed, suffix(h))
				}
			}
		}
	})
	err := fn(note)
	close(done)
	wg.Wait()
	p.setStatus("")
	if err != nil {
		return err
	}
	if took := time.Since(start); took >= 100*time.Millisecond {
		p.printf("    done in %s\n", round(took))
	} else {
		p.printf("    done\n")
	}
	return nil
}

func suffix(hint string) string {
	if hint == "" {
		return ""
	}
	return " (" + hint + ")"
}

// round makes a duration readable: 0.4s, 12.3s, 9m41s.
func round(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// runCommand runs a program, passing each line of its output to note; the
// error carries the last lines of that output.
func runCommand(ctx context.Context, note func(string), dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		s := bufio.NewScanner(pr)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			note(s.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	err := cmd.Run()
	pw.Close()
	<-scanned
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		// Its output went to note: the reason is above.
		return fmt.Errorf("%s %s: %w (its output is above)", name, strings.Join(args, " "), err)
	}
	return nil
}
