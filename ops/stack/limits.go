package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/config"
	"oficina/ops/sweep"
	"oficina/schema/sales"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant/ratelimit"
)

// rateLimiter is the company rate limit (part 8): on the JetStream bucket
// every API process shares, so together they allow exactly each company's
// ceiling; without NATS, in this process only. While NATS is out of reach
// each process allows its share of every ceiling (decision 0018): its
// presence in the bucket tells the others how many share it, every
// change of the connection's state starts a window in which the shares
// hold, and what they allowed is stored once NATS is back.
func (s *Stack) rateLimiter(ctx context.Context, cfg config.Config) (*ratelimit.Limiter, error) {
	if s.nc == nil {
		s.log.Warn("no NATS: rate limits count this process only")
		return ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{Base: service.Base{Log: s.log}, Fallback: s.metrics.RateLimitFallback()}), nil
	}
	js, err := jetstream.New(s.nc)
	if err != nil {
		return nil, fmt.Errorf("stack: jetstream: %w", err)
	}
	jcfg := jsconfig.Config{Replicas: cfg.StreamReplicas}
	kv, err := jsconfig.EnsureRateLimit(ctx, js, jcfg)
	switch {
	case errors.Is(err, jsconfig.ErrRateLimitInMemory):
		s.log.Warn("rate limits: a NATS restart will forget them; delete the bucket once to have it recreated on file",
			"bucket", jsconfig.RateLimitBucket, "error", err)
	case err != nil:
		return nil, fmt.Errorf("stack: rate limits: %w", err)
	}
	store := ratelimit.NewKV(kv)
	store.Recreate = func(ctx context.Context) (jetstream.KeyValue, error) {
		s.log.Warn("rate limits: bucket gone (NATS restarted?), recreating it")
		return jsconfig.EnsureRateLimit(ctx, js, jcfg)
	}
	store.Connected = s.nc.IsConnected
	presence := ratelimit.NewPresence(store, ratelimit.PresenceConfig{ID: processID()})
	lim := ratelimit.New(store, ratelimit.Config{Base: service.Base{Log: s.log}, Presence: presence, Fallback: s.metrics.RateLimitFallback(),
		Timeout: cfg.RateLimitTimeout})
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = presence.Beat(bctx)
	cancel()
	if err != nil {
		s.log.Warn("rate limits: presence not noted; until it is, this process counts as if alone", "error", err)
	}
	states := s.nc.StatusChanged()
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = lim.Run(rctx) })
	wg.Go(func() {
		for st := range states {
			lim.Unreachable()
			if st == nats.CONNECTED { // back: store what the shares allowed
				lim.Flush(rctx)
			}
		}
	})
	s.limiter = func() {
		stop()
		s.nc.RemoveStatusListener(states)
		wg.Wait()
	}
	return lim, nil
}

// processID names this process among the API processes sharing the rate
// limits (host and pid, for operators reading the bucket, and a random
// part so two never share a name).
func processID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// startSweeper runs the retention clean-ups of the API's own records
// (expired idempotency records) and the automatic routines (sales overdue,
// client certificates about to expire) until the returned stop is called.
func (s *Stack) startSweeper(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	r := &sweep.Runner{Base: service.Base{Log: s.log}, Tasks: []sweep.Task{sweep.Idempotency(s.workers)}}
	wg.Go(func() { _ = r.Run(ctx) })
	// The automatic routines of the sales module: marking installments and
	// sales overdue once a company's day has turned (idempotent, so running
	// it every quarter hour marks each within 15 minutes of midnight in the
	// company's time zone). Their events come summarized (spec 6.3 rule 5);
	// each company's run is a write unit, published after its commit.
	wr := &streams.Writer{DB: s.workers, Publisher: s.events.publisher()}
	// The warning before an endpoint's client certificate expires, once per
	// certificate, is the other routine: nothing else notices time passing.
	routines := &sweep.Runner{Base: service.Base{Log: s.log}, Interval: 15 * time.Minute, Tasks: []sweep.Task{{
		Name: "sales overdue",
		Sweep: func(ctx context.Context, now time.Time) (int, error) {
			res, err := sales.MarkOverdueAll(ctx, wr, s.workers, now)
			return res.Sales + res.Installments, err
		},
	}, {
		Name: "client certificates expiring",
		Sweep: func(ctx context.Context, now time.Time) (int, error) {
			return webhooks.WarnExpiringCertificatesAll(ctx, wr, s.workers, now)
		},
	}}}
	wg.Go(func() { _ = routines.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}
