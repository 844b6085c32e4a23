package main

import (
	"context"
	"io"
	"log/slog"

	"oficina/ops/config"
	"oficina/ops/stack"
)

// runDispatch is `oficina dispatch`: a webhook dispatcher. Start as many
// as needed; they share the DELIVERIES partitions without configuration
// and take over those of a dispatcher that stops or dies.
func runDispatch(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, _, err := config.Parse("dispatch", args, nil)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	slog.SetDefault(log)
	return stack.RunDispatch(ctx, stack.Options{Config: cfg, Logger: log})
}
