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
	return stack.Run(ctx, stack.Options{Config: cfg, Embedded: true, Migrate: true, Seed: seed, Out: stdout, Logger: log})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, _, err := config.Parse("serve", args, nil)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	slog.SetDefault(log)
	return stack.Run(ctx, stack.Options{Config: cfg, Out: stdout, Logger: log})
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
