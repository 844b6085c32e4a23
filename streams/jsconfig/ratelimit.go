package jsconfig

import (
	"context"
	"errors"
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

// rateLimitConfig: one revision per key, as compare-and-swap needs only
// the latest. File storage, so the logs survive the restart of a NATS
// server: they are what the API processes count by once NATS is back,
// and a memory bucket outside a cluster comes back empty, forgetting the
// last minute of every company (decision 0018). The cost is a buffered
// write of a few kilobytes per allowed request (~10 µs measured).
func rateLimitConfig(cfg Config) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      RateLimitBucket,
		Description: "Oficina company rate limits: sliding-window logs by company id",
		History:     1,
		TTL:         rateLimitTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	}
}

// ErrRateLimitInMemory comes with a usable bucket that an earlier version
// kept in memory and this process may not replace (its NATS user lacks
// $JS.API.STREAM.DELETE for it): limits work, but a NATS restart forgets
// them. Deleting the bucket once (`nats kv del OFICINA_RATELIMIT`, as an
// administrator) lets the next start create it on file.
var ErrRateLimitInMemory = errors.New("jsconfig: the rate-limit bucket is in memory and could not be replaced")

// EnsureRateLimit creates or updates the rate-limit bucket and returns it.
// Like Ensure it may run in every process at once. A bucket kept in
// memory by an earlier version is replaced (a stream's storage cannot
// change): at most a minute of budgets is forgotten, once. Where that is
// not permitted it returns the bucket with ErrRateLimitInMemory.
func EnsureRateLimit(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.KeyValue, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	want := rateLimitConfig(cfg)
	if old, err := js.KeyValue(ctx, RateLimitBucket); err == nil {
		if st, err := old.Status(ctx); err == nil {
			if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && bs.StreamInfo().Config.Storage != want.Storage {
				if err := js.DeleteKeyValue(ctx, RateLimitBucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
					return old, fmt.Errorf("%w: %w", ErrRateLimitInMemory, err)
				}
			}
		}
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("jsconfig: bucket %s: %w", RateLimitBucket, err)
	}
	return kv, nil
}
