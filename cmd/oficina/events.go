package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/config"
	"oficina/ops/stack"
	"oficina/streams"
)

// runEvents is `oficina events tail --company <id> [--type sale.*]
// [--since 1h]`: it prints the company's events, one envelope (JSON) per
// line, as they reach JetStream.
func runEvents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "tail" {
		fmt.Fprintln(stderr, "usage: oficina events tail --company <id> [--type sale.*] [--since 1h]")
		return errors.New("events: unknown or missing action (want tail)")
	}
	var o streams.TailOptions
	cfg, _, err := config.Parse("events tail", args[1:], func(fs *flag.FlagSet) {
		fs.StringVar(&o.CompanyID, "company", "", "company id (required)")
		fs.StringVar(&o.Type, "type", "", "event type filter with NATS wildcards: sale.*, sale.paid, *.updated (default every event)")
		fs.DurationVar(&o.Since, "since", 0, "also print the events of this period before following new ones")
	})
	if err != nil {
		return err
	}
	if o.CompanyID == "" {
		return errors.New("events tail: --company is required")
	}
	if _, err := streams.TailFilter(o); err != nil {
		return err
	}
	return tail(ctx, natsURL(cfg), o, stdout)
}

// natsURL is NATS_URL, or the embedded server of `oficina dev`.
func natsURL(cfg config.Config) string {
	if cfg.NATSURL != "" {
		return cfg.NATSURL
	}
	return "nats://127.0.0.1:" + strconv.Itoa(cfg.NATSPort)
}

// tail prints o's events from the NATS at url until ctx ends.
func tail(ctx context.Context, url string, o streams.TailOptions, out io.Writer) error {
	nc, err := nats.Connect(url, nats.Name("oficina-events-tail"), nats.Timeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("events tail: connect %s: %w", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("events tail: %w", err)
	}
	return streams.Tail(ctx, js, o, func(_ string, body []byte) error {
		_, err := fmt.Fprintf(out, "%s\n", body)
		return err
	})
}

// runRelay is `oficina relay`: it republishes events and deliveries left
// unpublished, and runs the retention sweeper and the mail sender.
func runRelay(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, _, err := config.Parse("relay", args, nil)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	slog.SetDefault(log)
	return stack.RunRelay(ctx, stack.Options{Config: cfg, Logger: log})
}
