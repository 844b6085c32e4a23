package ratelimit_test

import (
	"context"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"oficina/tenant/ratelimit"
)

// BenchmarkTake measures one counted request against a budget on the
// embedded JetStream (one compare-and-swap round trip), the same request on
// the in-process store, and a refused request (decided without the store).
func BenchmarkTake(b *testing.B) {
	kv := bucket(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		lim   *ratelimit.Limiter
		limit int
	}{
		{"kv_allowed_600", ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{}), 600},
		{"kv_allowed_1e9", ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{}), 1_000_000_000},
		{"memory_allowed_600", ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{}), 600},
		{"kv_refused", ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{}), 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			// A fresh key per run: every allowed request stays allowed for
			// the 600 case only while the budget lasts, so spread over keys.
			i := 0
			key := bc.name
			for b.Loop() {
				if bc.limit == 600 && i%500 == 0 {
					key = bc.name + strconv.Itoa(i)
				}
				i++
				if _, err := bc.lim.Take(ctx, key, bc.limit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTakeParallel: many requests of one company at once in one
// process, batched into shared round trips.
func BenchmarkTakeParallel(b *testing.B) {
	lim := ratelimit.New(ratelimit.NewKV(bucket(b)), ratelimit.Config{})
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := lim.Take(ctx, "co_parallel", 1_000_000_000); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkThrottleCheck is the per-request cost of the auth-failure
// throttle for an address that never failed.
func BenchmarkThrottleCheck(b *testing.B) {
	th := ratelimit.NewThrottle(ratelimit.DefaultAuthFailures, time.Minute, nil)
	ip := netip.MustParseAddr("198.51.100.1")
	for b.Loop() {
		th.Check(ip)
	}
}
