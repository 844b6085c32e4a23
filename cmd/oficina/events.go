package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/config"
	"oficina/ops/natsauth"
	"oficina/ops/natsconn"
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
	return tail(ctx, natsURL(cfg), devIdentity(cfg), o, stdout)
}

// devIdentity is the configured NATS identity or, against the embedded
// NATS of `oficina dev` with none configured, dev's read-only consumer.
func devIdentity(cfg config.Config) config.NATS {
	n := cfg.NATS
	if cfg.NATSURL != "" || n.CredsFile != "" || n.NKeyFile != "" || n.User != "" || n.Token != "" {
		return n
	}
	seed := natsauth.SeedFile(stack.NATSAuthDir(cfg.DataDir), natsauth.Consumer)
	if _, err := os.Stat(seed); err == nil {
		n.NKeyFile = seed
	}
	return n
}

// natsURL is NATS_URL, or the embedded server of `oficina dev`.
func natsURL(cfg config.Config) string {
	if cfg.NATSURL != "" {
		return cfg.NATSURL
	}
	return "nats://127.0.0.1:" + strconv.Itoa(cfg.NATSPort)
}

// tail prints o's events from the NATS at url until ctx ends, as a
// consumer whose replies come on _INBOX.consumer.<company> (what a user
// scoped to that company may read) unless the configuration names a prefix.
func tail(ctx context.Context, url string, id config.NATS, o streams.TailOptions, out io.Writer) error {
	nc, err := natsconn.Connect(url, id, natsauth.Consumer+"."+o.CompanyID, nil, nats.Timeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("events tail: %w", err)
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
