// Command echo is Ramjet's own backend for the Gateway API conformance
// suite: it keeps the contract of the suite's echo-basic image (the same
// environment variables, ports, paths and answers) so that the test
// harness can run it, for each Pod of the suite's manifests, at the Pod's
// address.
//
// The mode comes from GRPC_ECHO_SERVER, TCP_ECHO_SERVER or UDP_ECHO_SERVER
// (HTTP without any); POD_IP binds every listener to that address (all
// addresses without it). See internal/config for every variable and
// internal/server for the listeners of each mode.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/server"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("echo server stopped", "error", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	c, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := server.Start(ctx, c, log)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return r.Wait()
}
