package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Store keeps each budget's state with a revision for compare-and-swap.
type Store interface {
	// Load returns the state of key and its revision; an absent key is
	// (nil, 0, nil).
	Load(ctx context.Context, key string) (state []byte, rev uint64, err error)
	// Swap stores state if key is still at rev (0: absent) and returns the
	// new revision; ErrConflict when someone changed it first.
	Swap(ctx context.Context, key string, state []byte, rev uint64) (uint64, error)
}

// ErrConflict is a lost compare-and-swap.
var ErrConflict = errors.New("ratelimit: state changed since it was read")

// KV is a Store on a JetStream key-value bucket shared by every API process
// (see jsconfig.RateLimitBucket): Swap is a publish with an expected
// last-subject-sequence, which the stream checks atomically.
type KV struct {
	kv atomic.Pointer[jetstream.KeyValue]
	// Recreate, when set, brings the bucket back when the server no longer
	// has it: a memory bucket does not survive the restart of a NATS
	// server outside a cluster, and without it every company would stay
	// unlimited (the limiter fails open) until the API restarted.
	Recreate func(context.Context) (jetstream.KeyValue, error)
	// Connected, when set, says whether NATS is reachable (nats.Conn's
	// IsConnected): while it says no, Load and Swap fail at once with
	// ErrUnavailable instead of queueing a request that waits for its
	// deadline.
	Connected func() bool

	mu        sync.Mutex // one recreation at a time
	recreated time.Time
}

// NewKV returns a store over bucket kv.
func NewKV(kv jetstream.KeyValue) *KV {
	s := &KV{}
	s.kv.Store(&kv)
	return s
}

// bucket is the current bucket; after an error showing it gone it is
// recreated once.
func (s *KV) bucket(ctx context.Context, err error) (jetstream.KeyValue, bool) {
	if err == nil || s.Recreate == nil || !(errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrNoResponders)) {
		return *s.kv.Load(), false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.recreated) < time.Second { // requests failing together: one recreation
		return *s.kv.Load(), true
	}
	kv, rerr := s.Recreate(ctx)
	if rerr != nil {
		return *s.kv.Load(), false
	}
	s.recreated = time.Now()
	s.kv.Store(&kv)
	return kv, true
}

func (s *KV) unavailable() bool { return s.Connected != nil && !s.Connected() }

// Load implements Store.
func (s *KV) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	if s.unavailable() {
		return nil, 0, ErrUnavailable
	}
	e, err := (*s.kv.Load()).Get(ctx, key)
	if kv, again := s.bucket(ctx, err); again {
		e, err = kv.Get(ctx, key)
	}
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("ratelimit: load %s: %w", key, err)
	}
	return e.Value(), e.Revision(), nil
}

// Swap implements Store. Revision 0 creates (which also steps over a delete
// marker); others update.
func (s *KV) Swap(ctx context.Context, key string, state []byte, rev uint64) (uint64, error) {
	if s.unavailable() {
		return 0, ErrUnavailable
	}
	var (
		n   uint64
		err error
	)
	swap := func(kv jetstream.KeyValue) {
		if rev == 0 {
			n, err = kv.Create(ctx, key, state)
		} else {
			n, err = kv.Update(ctx, key, state, rev)
		}
	}
	swap(*s.kv.Load())
	if kv, again := s.bucket(ctx, err); again {
		swap(kv)
	}
	switch {
	case rev == 0 && errors.Is(err, jetstream.ErrKeyExists), rev != 0 && errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return 0, ErrConflict
	}
	if err != nil {
		return 0, fmt.Errorf("ratelimit: swap %s: %w", key, err)
	}
	return n, nil
}

// Memory is a Store in this process: for a single process without NATS,
// and for tests of the arithmetic.
type Memory struct {
	mu   sync.Mutex
	seq  uint64
	data map[string]memEntry
}

type memEntry struct {
	state []byte
	rev   uint64
}

// NewMemory returns an empty in-process store.
func NewMemory() *Memory { return &Memory{data: map[string]memEntry{}} }

// Load implements Store.
func (m *Memory) Load(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.data[key]
	return e.state, e.rev, nil
}

// Swap implements Store.
func (m *Memory) Swap(_ context.Context, key string, state []byte, rev uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data[key].rev != rev {
		return 0, ErrConflict
	}
	m.seq++
	m.data[key] = memEntry{state: append([]byte(nil), state...), rev: m.seq}
	return m.seq, nil
}
