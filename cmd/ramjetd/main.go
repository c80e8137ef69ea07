// Command ramjetd is Ramjet's data plane: a reverse proxy that serves a
// ramjet.yaml configuration, with an admin API on a unix socket.
//
//	ramjetd --config FILE                         serve
//	ramjetd validate --config FILE                check a configuration
//	ramjetd upstreams [show POOL] --admin-socket PATH
//	ramjetd drain --admin-socket PATH             drain before a stop (preStop)
//	ramjetd version (or --version)
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/dataplane/daemon"
	"github.com/ramjet-dev/ramjet/dataplane/logging"
	"github.com/ramjet-dev/ramjet/dataplane/version"
)

func main() {
	args := os.Args[1:]
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(args)
	case "validate":
		err = validate(args)
	case "upstreams":
		err = upstreams(args)
	case "drain":
		err = drain(args)
	case "version":
		fmt.Println(version.String("ramjetd"))
	default:
		err = fmt.Errorf("unknown command %q; the commands are serve (the default), validate, upstreams, drain and version", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ramjetd:", err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := pflag.NewFlagSet("ramjetd", pflag.ContinueOnError)
	configPath := fs.String("config", "/etc/ramjet/ramjet.yaml", "configuration file")
	drain := fs.Duration("drain-delay", daemon.DefaultDrainDelay, "after SIGTERM (or ramjetd drain), keep serving this long with /readyz failing")
	shutdown := fs.Duration("shutdown-timeout", daemon.DefaultShutdownTimeout, "after the drain delay, wait this long for requests in flight")
	level := fs.String("log-level", logging.DefaultLevel(), "debug, info, warn or error (or RAMJET_LOG)")
	format := fs.String("log-format", "text", "text or json")
	showVersion := fs.Bool("version", false, "print the version and the commit, and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		fmt.Println(version.String("ramjetd"))
		return nil
	}
	log, err := logging.New(*level, *format, os.Stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	d, err := daemon.New(daemon.Options{ConfigPath: *configPath, DrainDelay: *drain, ShutdownTimeout: *shutdown, Log: log})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	go func() {
		// After the first signal a second one stops the process at once,
		// without waiting for the drain.
		<-ctx.Done()
		stop()
	}()
	return d.Run(ctx)
}

func validate(args []string) error {
	fs := pflag.NewFlagSet("ramjetd validate", pflag.ContinueOnError)
	configPath := fs.String("config", "/etc/ramjet/ramjet.yaml", "configuration file to check")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := daemon.Check(*configPath); err != nil {
		return fmt.Errorf("%s is not valid:\n%v", *configPath, err)
	}
	fmt.Printf("%s is valid\n", *configPath)
	return nil
}

func upstreams(args []string) error {
	fs := pflag.NewFlagSet("ramjetd upstreams", pflag.ContinueOnError)
	socket := fs.String("admin-socket", "/run/ramjet/admin.sock", "admin socket of the ramjetd to ask")
	if err := fs.Parse(args); err != nil {
		return err
	}
	client := admin.NewClient(*socket)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch rest := fs.Args(); {
	case len(rest) == 0:
		pools, err := client.Pools(ctx)
		if err != nil {
			return err
		}
		return admin.WritePools(os.Stdout, pools)
	case len(rest) == 2 && rest[0] == "show":
		pool, err := client.Pool(ctx, rest[1])
		if err != nil {
			return err
		}
		return admin.WritePool(os.Stdout, pool)
	}
	return fmt.Errorf("usage: ramjetd upstreams [show POOL] --admin-socket PATH")
}

// drain starts the drain of the ramjetd behind the admin socket and
// returns when its drain delay is over: a Kubernetes preStop hook runs it,
// so that the SIGTERM that follows stops ramjetd at once.
func drain(args []string) error {
	fs := pflag.NewFlagSet("ramjetd drain", pflag.ContinueOnError)
	socket := fs.String("admin-socket", "/run/ramjet/admin.sock", "admin socket of the ramjetd to drain")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("usage: ramjetd drain --admin-socket PATH")
	}
	if _, err := admin.NewClient(*socket).Drain(context.Background()); err != nil {
		return err
	}
	fmt.Println("drained: /readyz answers 503 and keep-alive clients were told to close; ramjetd serves until SIGTERM")
	return nil
}
