package ratelimit_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/testkit"
	"oficina/streams/jsconfig"
	"oficina/tenant/ratelimit"
)

// Found by the chaos run: a memory bucket does not survive the restart of a
// single NATS server, and the limiter fails open, so without recreation
// every company stayed unlimited until the API restarted.
func TestLostBucketIsRecreatedAndLimitsHoldAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nc, err := testkit.NATS(t).Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := jsconfig.EnsureRateLimit(ctx, js, jsconfig.Config{})
	if err != nil {
		t.Fatal(err)
	}
	store := ratelimit.NewKV(kv)
	recreated := 0
	store.Recreate = func(ctx context.Context) (jetstream.KeyValue, error) {
		recreated++
		return jsconfig.EnsureRateLimit(ctx, js, jsconfig.Config{})
	}
	l := ratelimit.New(store, ratelimit.Config{})
	if d, err := l.Take(ctx, "co_lost", 1); err != nil || !d.Allowed {
		t.Fatalf("first request: %+v, %v", d, err)
	}
	if err := js.DeleteKeyValue(ctx, jsconfig.RateLimitBucket); err != nil { // what a restart does to it
		t.Fatal(err)
	}
	if d, err := l.Take(ctx, "co_next", 1); err != nil || !d.Allowed {
		t.Fatalf("first request after the loss: %+v, %v", d, err)
	}
	if d, err := l.Take(ctx, "co_next", 1); err != nil || d.Allowed {
		t.Fatalf("second request after the loss: %+v, %v (want refused: the ceiling holds again)", d, err)
	}
	if recreated != 1 {
		t.Fatalf("recreated %d times, want 1", recreated)
	}
}
