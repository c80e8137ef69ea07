package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// toolResult is what a load generator reports about one run.
type toolResult struct {
	responses int64         // answers received, whatever their status
	non2xx    int64         // answers other than 2xx
	errors    int64         // socket errors, failed or timed-out streams
	rps       float64       // the tool's requests per second
	tls       string        // protocol, cipher and key exchange (h2load over TLS), "" otherwise
	ttfb      time.Duration // h2load's mean time to the first byte of an answer, from the connection's start
}

// parseWrk reads the summary wrk prints. wrk counts 3xx with 2xx; the
// benchmark's backend never redirects, so its "Non-2xx or 3xx" count is
// the non-2xx count.
func parseWrk(out string) (toolResult, error) {
	var r toolResult
	var seenCount, seenRate bool
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		key, val, _ := strings.Cut(line, ":")
		val = strings.TrimSpace(val)
		var err error
		switch {
		case strings.Contains(line, " requests in "): // 53594 requests in 2.01s, 64.60MB read
			r.responses, err = strconv.ParseInt(strings.Fields(line)[0], 10, 64)
			seenCount = true
		case key == "Requests/sec":
			r.rps, err = strconv.ParseFloat(val, 64)
			seenRate = true
		case key == "Non-2xx or 3xx responses":
			r.non2xx, err = strconv.ParseInt(val, 10, 64)
		case key == "Socket errors":
			r.errors, err = sumCounts(val, "connect", "read", "write", "timeout")
		}
		if err != nil {
			return r, fmt.Errorf("wrk: %q: %w", line, err)
		}
	}
	if !seenCount || !seenRate {
		return r, fmt.Errorf("wrk: no summary in its output: %q", lastLine(out))
	}
	return r, nil
}

// sumCounts adds the numbers of a list such as "connect 0, read 12" (name
// first) or "3 2xx, 0 3xx" (number first) whose names are all of names.
func sumCounts(list string, names ...string) (int64, error) {
	var sum int64
	for item := range strings.SplitSeq(list, ",") {
		f := strings.Fields(item)
		if len(f) != 2 {
			return 0, fmt.Errorf("%q is not a name and a number", item)
		}
		num, name := f[1], f[0]
		if _, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			num, name = f[0], f[1]
		}
		if !slices.Contains(names, name) {
			return 0, fmt.Errorf("unknown count %q", name)
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// parseH2load reads the summary h2load prints. Answers are the sum of its
// status classes; errors are its errored and timed-out requests (failed
// ones are those plus the 4xx and 5xx answers).
func parseH2load(out string) (toolResult, error) {
	var r toolResult
	var tls []string
	var seenFinished, seenRequests, seenStatus bool
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		key, val, _ := strings.Cut(line, ":")
		var err error
		switch {
		case strings.HasPrefix(line, "finished in "):
			r.rps, err = h2loadRate(line)
			seenFinished = true
		case key == "requests":
			err = h2loadRequests(val, &r)
			seenRequests = true
		case key == "status codes":
			err = h2loadStatus(val, &r)
			seenStatus = true
		case key == "time to 1st byte":
			r.ttfb, err = h2loadMean(val)
		case key == "TLS Protocol" || key == "Cipher" || key == "Server Temp Key":
			tls = append(tls, strings.TrimSpace(val))
		}
		if err != nil {
			return r, fmt.Errorf("h2load: %q: %w", line, err)
		}
	}
	if !seenFinished || !seenRequests || !seenStatus {
		return r, fmt.Errorf("h2load: no summary in its output: %q", lastLine(out))
	}
	r.tls = strings.Join(tls, ", ")
	return r, nil
}

// h2loadRate reads the rate of "finished in 2.00s, 4000.00 req/s, 4.39MB/s".
func h2loadRate(line string) (float64, error) {
	f := strings.Fields(line)
	if len(f) < 5 || f[4] != "req/s," {
		return 0, errors.New("no req/s")
	}
	return strconv.ParseFloat(f[3], 64)
}

// h2loadRequests reads "N total, N started, N done, N succeeded, N failed,
// N errored, N timeout".
func h2loadRequests(val string, r *toolResult) error {
	for item := range strings.SplitSeq(val, ",") {
		f := strings.Fields(item)
		if len(f) != 2 {
			return fmt.Errorf("%q is not a number and a name", item)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return err
		}
		if f[1] == "errored" || f[1] == "timeout" {
			r.errors += n
		}
	}
	return nil
}

// h2loadStatus reads "N 2xx, N 3xx, N 4xx, N 5xx".
func h2loadStatus(val string, r *toolResult) error {
	all, err := sumCounts(val, "2xx", "3xx", "4xx", "5xx")
	if err != nil {
		return err
	}
	ok, err := sumCounts(strings.Split(val, ",")[0], "2xx")
	if err != nil {
		return err
	}
	r.responses, r.non2xx = all, all-ok
	return nil
}

// h2loadMean reads the mean (third column) of a row such as "time to 1st
// byte: min max mean sd +/-sd".
func h2loadMean(val string) (time.Duration, error) {
	f := strings.Fields(val)
	if len(f) < 3 {
		return 0, errors.New("fewer than three columns")
	}
	return time.ParseDuration(strings.Replace(f[2], "us", "µs", 1))
}

// parseH2loadLog reads h2load's --log-file (start time in µs since the
// epoch, status, µs to the end of the answer; tab-separated) and returns
// the durations of the 2xx answers.
func parseH2loadLog(log string) ([]time.Duration, error) {
	var d []time.Duration
	for line := range strings.Lines(log) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) < 3 {
			return nil, fmt.Errorf("h2load log: %q has fewer than three columns", line)
		}
		status, err1 := strconv.Atoi(f[1])
		us, err2 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("h2load log: %q: %w", line, err)
		}
		if status >= 200 && status < 300 {
			d = append(d, time.Duration(us)*time.Microsecond)
		}
	}
	return d, nil
}

// lastLine is the last non-empty line of a tool's output, for errors.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
