package main

import (
	"math"
	"strconv"
	"strings"
)

// number formats a measurement with three significant digits or more:
// 12,345, 123, 12.3, 1.23, 0.123, and 0. NaN (nothing measured) is "—".
func number(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "—"
	case v == 0:
		return "0"
	case a >= 100:
		return whole(v)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// whole formats a count: 1,234.
func whole(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return thousands(strconv.FormatFloat(v, 'f', 0, 64))
}

// thousands puts a comma between groups of three digits of an integer.
func thousands(digits string) string {
	sign := ""
	if rest, ok := strings.CutPrefix(digits, "-"); ok {
		sign, digits = "-", rest
	}
	for i := len(digits) - 3; i > 0; i -= 3 {
		digits = digits[:i] + "," + digits[i:]
	}
	return sign + digits
}

// fixed2 formats a share or a number of cores: 0.97.
func fixed2(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// formatSpread is "median (min–max)", or the median alone when every
// repetition measured the same.
func formatSpread(s spread, format func(float64) string) string {
	m, lo, hi := format(s.median), format(s.min), format(s.max)
	if lo == hi {
		return m
	}
	return m + " (" + lo + "–" + hi + ")"
}

// times formats a ratio: 0.42×.
func times(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// warn marks a value that fails a validity rule.
func warn(s string, bad bool) string {
	if bad {
		return "**" + s + " ⚠**"
	}
	return s
}

// tlsOf is what h2load reported of TLS in the runs, "—" for plain HTTP
// or wrk (which reports nothing).
func tlsOf(runs []trial) string {
	for _, r := range runs {
		for _, s := range []sample{r.full, r.fixed} {
			if s.tls != "" {
				return mdEscape(s.tls)
			}
		}
	}
	return "—"
}

// mdEscape keeps a tool's text from breaking a Markdown table.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
