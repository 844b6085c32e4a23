package stack

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/config"
	"oficina/ops/sweep"
	"oficina/schema/sales"
	"oficina/streams/jsconfig"
	"oficina/tenant/ratelimit"
)

// rateLimiter is the company rate limit (part 8): on the JetStream bucket
// every API process shares, so together they allow exactly each company's
// ceiling; without NATS, in this process only.
func (s *Stack) rateLimiter(ctx context.Context, cfg config.Config) (*ratelimit.Limiter, error) {
	if s.nc == nil {
		s.log.Warn("no NATS: rate limits count this process only")
		return ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{}), nil
	}
	js, err := jetstream.New(s.nc)
	if err != nil {
		return nil, fmt.Errorf("stack: jetstream: %w", err)
	}
	jcfg := jsconfig.Config{Replicas: cfg.StreamReplicas}
	kv, err := jsconfig.EnsureRateLimit(ctx, js, jcfg)
	if err != nil {
		return nil, fmt.Errorf("stack: rate limits: %w", err)
	}
	store := ratelimit.NewKV(kv)
	store.Recreate = func(ctx context.Context) (jetstream.KeyValue, error) {
		s.log.Warn("rate limits: bucket gone (NATS restarted?), recreating it")
		return jsconfig.EnsureRateLimit(ctx, js, jcfg)
	}
	return ratelimit.New(store, ratelimit.Config{}), nil
}

// startSweeper runs the retention clean-ups of the API's own records
// (expired idempotency records) until the returned stop is called.
func (s *Stack) startSweeper(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	r := &sweep.Runner{Tasks: []sweep.Task{sweep.Idempotency(s.workers)}, Log: s.log}
	wg.Go(func() { _ = r.Run(ctx) })
	// The automatic routines of the sales module: marking installments and
	// sales overdue once a company's day has turned (idempotent, so running
	// it every quarter hour marks each within 15 minutes of midnight in the
	// company's time zone). Their events come summarized (spec 6.3 rule 5)
	// and the relay publishes them.
	routines := &sweep.Runner{Every: 15 * time.Minute, Log: s.log, Tasks: []sweep.Task{{
		Name: "sales overdue",
		Sweep: func(ctx context.Context, now time.Time) (int, error) {
			res, err := sales.MarkOverdueAll(ctx, s.workers, now)
			return res.Sales + res.Installments, err
		},
	}}}
	wg.Go(func() { _ = routines.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}
