package jsconfig

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// RateLimitBucket is the KV bucket of the company rate limits: one key per
// company (its id) whose value is the log of the requests its sliding
// window counts, changed only by compare-and-swap (tenant/ratelimit).
const RateLimitBucket = "OFICINA_RATELIMIT"

// rateLimitTTL drops a company's entry once it has been idle this long; any
// value longer than the 60 s window (plus clock skew) loses nothing.
const rateLimitTTL = 5 * time.Minute

// rateLimitConfig: memory storage, since a budget is worth at most a minute
// and a write per request should not touch a disk; one revision per key, as
// compare-and-swap needs only the latest.
func rateLimitConfig(cfg Config) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      RateLimitBucket,
		Description: "Oficina company rate limits: sliding-window logs by company id",
		History:     1,
		TTL:         rateLimitTTL,
		Storage:     jetstream.MemoryStorage,
		Replicas:    cfg.Replicas,
	}
}

// EnsureRateLimit creates or updates the rate-limit bucket and returns it.
// Like Ensure it may run in every process at once.
func EnsureRateLimit(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.KeyValue, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, rateLimitConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("jsconfig: bucket %s: %w", RateLimitBucket, err)
	}
	return kv, nil
}
