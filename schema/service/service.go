// Package service is the base every long-lived service of Oficina embeds
// (relay, recovery worker, mail sender, sweeper, …): its logger, the
// business clock and the wall clock, and the one start/stop contract —
// Run works until its context ends and then returns nil; an error means it
// could not work at all.
//
// The two clocks are named apart on purpose. The business clock (Now)
// decides what the rules see: when a fact happened, what is due, what has
// expired; tests move it to run a delivery's three days in seconds. The
// wall clock (Wall) stamps bookkeeping and measures durations, and is
// never moved.
//
// It sits in the kernel, below every room, so the lowest packages (tenant,
// streams) can use it like the highest.
package service

import (
	"context"
	"log/slog"
	"time"
)

// Base is what a service embeds. Zero fields take the defaults:
// slog.Default and time.Now.
type Base struct {
	// Log receives what the service reports.
	Log *slog.Logger
	// Now is the business clock.
	Now func() time.Time
	// Wall is the wall clock.
	Wall func() time.Time
}

// Logger returns Log, or slog.Default.
func (b Base) Logger() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}

// BusinessNow reads the business clock.
func (b Base) BusinessNow() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// WallNow reads the wall clock.
func (b Base) WallNow() time.Time {
	if b.Wall != nil {
		return b.Wall()
	}
	return time.Now()
}

// Service is the start/stop contract: Run works until ctx ends, then
// returns nil.
type Service interface {
	Run(ctx context.Context) error
}

// Every runs round at once and then every interval until ctx ends, the
// shape of every polling worker: a round's error is logged (unless ctx
// ended, which stops the loop), and a round that did something (n > 0) is
// logged with its count. It returns nil when ctx ends.
func (b Base) Every(ctx context.Context, interval time.Duration, name string, round func(context.Context) (int, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := round(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			b.Logger().WarnContext(ctx, name, "error", err)
		case err == nil && n > 0:
			b.Logger().InfoContext(ctx, name, "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
