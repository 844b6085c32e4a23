package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"oficina/ops/config"
	"oficina/ops/migrate"
	"oficina/ops/stack"
)

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var seed bool
	cfg, _, err := config.Parse("dev", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&seed, "seed", false, "create the demo company and print a fresh API key")
	})
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	slog.SetDefault(log)
	return stack.Run(ctx, stack.Options{Config: cfg, Embedded: true, Migrate: true, Seed: seed, Out: stdout, Logger: log,
		Ready: keepDefaultLogger(log)})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, _, err := config.Parse("serve", args, nil)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	slog.SetDefault(log)
	return stack.Run(ctx, stack.Options{Config: cfg, Out: stdout, Logger: log, Ready: keepDefaultLogger(log)})
}

// keepDefaultLogger puts log back as the process's default once the API
// is up: the public router is built with fuego.WithoutLogger, which
// replaces the default with a discarding handler, and the causes of 5xx
// answers (logged by http/wire through the default) were lost.
func keepDefaultLogger(log *slog.Logger) func(stack.Addrs) {
	return func(stack.Addrs) { slog.SetDefault(log) }
}

func runMigrate(ctx context.Context, args []string, stdout, _ io.Writer) error {
	cfg, _, err := config.Parse("migrate", args, nil)
	if err != nil {
		return err
	}
	applied, err := migrate.Run(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d migration(s) applied\n", len(applied.Migrations))
	for _, n := range applied.Migrations {
		fmt.Fprintln(stdout, " ", n)
	}
	fmt.Fprintf(stdout, "%d function(s) applied\n", len(applied.Functions))
	for _, n := range applied.Functions {
		fmt.Fprintln(stdout, " ", n)
	}
	return nil
}
