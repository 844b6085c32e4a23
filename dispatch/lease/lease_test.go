package lease_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/dispatch/lease"
	"oficina/ops/testkit"
	"oficina/schema/service"
)

// flakyKV fails member listings and renewals on demand, as a bucket does
// while the JetStream meta leader or the bucket's leader is being elected.
type flakyKV struct {
	jetstream.KeyValue
	failList, failUpdate atomic.Bool
	failedUpdates        atomic.Int64
}

var errElection = errors.New("test: no leader")

func (k *flakyKV) ListKeysFiltered(ctx context.Context, filters ...string) (jetstream.KeyLister, error) {
	if k.failList.Load() {
		return nil, errElection
	}
	return k.KeyValue.ListKeysFiltered(ctx, filters...)
}

func (k *flakyKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if k.failUpdate.Load() {
		k.failedUpdates.Add(1)
		return 0, errElection
	}
	return k.KeyValue.Update(ctx, key, value, rev)
}

func start(t *testing.T, kv jetstream.KeyValue, ttl time.Duration) *lease.Manager {
	t.Helper()
	m := &lease.Manager{KV: kv, ID: "dsp_a", Partitions: 4, TTL: ttl, Base: service.Base{Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Work: func(soft, hard context.Context, _ int) { <-soft.Done() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitOwned(t, m, 4)
	return m
}

func waitOwned(t *testing.T, m *lease.Manager, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Owned()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("owned %v, want %d partitions", m.Owned(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func bucket(t *testing.T, ttl time.Duration) *flakyKV {
	t.Helper()
	nc, err := testkit.NATS(t).Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := lease.EnsureBucket(context.Background(), js, ttl, 1)
	if err != nil {
		t.Fatal(err)
	}
	return &flakyKV{KeyValue: kv}
}

// Design "JetStream": an unreadable member list (meta leader election)
// must not make a dispatcher hand back the partitions it holds.
func TestUnreadableMembersKeepPartitions(t *testing.T) {
	t.Parallel()
	kv := bucket(t, 900*time.Millisecond)
	m := start(t, kv, 900*time.Millisecond)
	kv.failList.Store(true)
	time.Sleep(2 * time.Second) // several rounds without a member list
	if got := m.Owned(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("owned after rounds without members = %v, want all 4 kept", got)
	}
}

// A renewal that times out is not a loss until the key may have expired;
// then the partition is dropped (fencing) and taken again once renewals
// work.
func TestRenewalFailureKeptUntilExpiry(t *testing.T) {
	t.Parallel()
	ttl := 900 * time.Millisecond
	kv := bucket(t, ttl)
	m := start(t, kv, ttl)
	kv.failUpdate.Store(true)
	for kv.failedUpdates.Load() == 0 { // a round's renewals have failed
		time.Sleep(time.Millisecond)
	}
	if n := len(m.Owned()); n != 4 {
		t.Fatalf("after one failed renewal owned %d, want 4 kept", n)
	}
	waitOwned(t, m, 0) // past 2/3 TTL without a renewal: dropped
	kv.failUpdate.Store(false)
	waitOwned(t, m, 4)
}
