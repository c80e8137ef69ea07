// Package logging sets up the structured logs (log/slog, to stderr) of
// Ramjet's two programs, from --log-level (or RAMJET_LOG) and --log-format.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"os"
)

// DefaultLevel is the level when neither --log-level nor RAMJET_LOG says.
func DefaultLevel() string {
	if v := os.Getenv("RAMJET_LOG"); v != "" {
		return v
	}
	return "info"
}

// New returns a logger writing to w at level (debug, info, warn or error)
// in format (text or json).
func New(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}
