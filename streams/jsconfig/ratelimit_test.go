package jsconfig

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// Decision 0017: the rate-limit bucket is kept on file, so a NATS restart
// keeps the logs; a bucket an earlier version kept in memory is replaced
// (its storage cannot be updated).
func TestRateLimitBucketIsOnFileAndReplacesAMemoryOne(t *testing.T) {
	t.Parallel()
	ctx, js := startJS(t)
	old := rateLimitConfig(Config{Replicas: 1})
	old.Storage = jetstream.MemoryStorage
	if _, err := js.CreateKeyValue(ctx, old); err != nil {
		t.Fatal(err)
	}
	for range 2 { // replaced once, then kept
		kv, err := EnsureRateLimit(ctx, js, Config{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Storage; got != jetstream.FileStorage {
			t.Fatalf("storage %v, want file", got)
		}
		if _, err := kv.Put(ctx, "co_kept", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	kv, _ := js.KeyValue(ctx, RateLimitBucket)
	if e, err := kv.Get(ctx, "co_kept"); err != nil || string(e.Value()) != "x" {
		t.Fatalf("a second Ensure lost the bucket's keys: %v", err)
	}
}
