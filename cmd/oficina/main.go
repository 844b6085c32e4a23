// Command oficina is the one binary of Oficina. Subcommands:
//
//	dev       everything in one process on an embedded NATS (make run)
//	serve     the public and admin API against DATABASE_URL and NATS_URL
//	migrate   apply database migrations as the owner
//	admin     dashboard actions from the shell, through the admin API
//	openapi   print the generated OpenAPI document
//	bench     run the benchmark scenarios and print their figures
//	relay     republish events left unpublished (and sweep, and send mail)
//	dispatch  webhook dispatcher (any number; they share the partitions)
//	events    events tail: print a company's events as they arrive
//	receive   a local HTTPS webhook receiver for development
//	listen    forward the company's events, signed, to a local URL
//	trigger   make an event happen through the public API
//
// Run `oficina <subcommand> -h` for its flags; every flag also reads an
// environment variable named in its help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "oficina:", err)
		}
		os.Exit(1)
	}
}

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"dev", "everything in one process on an embedded NATS (what `make run` runs)", runDev},
		{"serve", "public and admin API against DATABASE_URL and NATS_URL", runServe},
		{"migrate", "apply database migrations as the owner of DATABASE_URL", runMigrate},
		{"admin", "dashboard actions through the admin API (oficina admin help)", runAdmin},
		{"openapi", "print the generated OpenAPI document", runOpenAPI},
		{"bench", "run the benchmark scenarios and print their figures (make bench)", runBench},
		{"relay", "republish events left unpublished; retention sweeper and mail sender", runRelay},
		{"dispatch", "webhook dispatcher: deliver, retry, share DELIVERIES partitions with other dispatchers", runDispatch},
		{"events", "events tail --company <id> [--type sale.*]: print a company's events as they arrive", runEvents},
		{"hostile", "hostile input against a running oficina dev: cases by category, failures (make hostile)", runHostile},
		{"receive", "a local HTTPS webhook receiver for development: prints each delivery, checks signatures (docs/api.md)", runReceive},
		{"listen", "listen --forward-to URL: the company's events as they happen, signed, posted to a local URL", runListen},
		{"trigger", "trigger <event type>: make that event happen through the public API (with listen running)", runTrigger},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown subcommand %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: oficina <subcommand> [flags]\n\nsubcommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
