// Package lease shares the DELIVERIES partitions among the running
// dispatchers through a JetStream key-value bucket, without configuration:
// each dispatcher heartbeats a member key; all see the same sorted member
// list and each wants the partitions p with members[p % n] == itself; a
// partition is owned by whoever holds its key, created with Create (only
// when absent) and renewed with Update at the last revision (fencing: a
// holder whose revision moved on has lost it and stops at once). Keys live
// for TTL after their last write (the bucket's MaxAge), so a dead
// dispatcher's partitions free themselves and are taken within TTL plus
// one tick; a live one hands back partitions it no longer wants, after its
// work in flight finishes.
package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/schema/service"
)

// Bucket is the key-value bucket of dispatcher leases.
const Bucket = "OFICINA_DISPATCH"

// Work runs a partition while it is owned: soft ends when the partition is
// handed back (finish what is in flight, start nothing), hard when the
// lease is lost (abort). Run waits for it before releasing the key.
type Work func(soft, hard context.Context, partition int)

// Manager takes part in the sharing for one process.
type Manager struct {
	// Base gives the logger. Renewals are timed on time.Now, not a clock
	// of the base: the keys expire on the NATS server's clock.
	service.Base
	KV         jetstream.KeyValue
	ID         string
	Partitions int
	TTL        time.Duration
	Work       Work

	mu          sync.Mutex
	owned       map[int]*held
	lastMembers []string // last list read; kept when a read fails
}

type held struct {
	rev        uint64
	renewed    time.Time // last successful write of the key
	soft, hard context.CancelFunc
	done       chan struct{}
	releasing  bool
}

// EnsureBucket creates the lease bucket, or binds to it when it exists;
// keys expire ttl after their last write. It is kept on file: a memory
// bucket does not survive the restart of a NATS server outside a cluster,
// and the dispatchers, which create it only at start, could then never
// take a partition again (found by ops/proving/chaos). Dispatchers starting together
// all call it: in a cluster, concurrent CreateOrUpdate calls of a
// replicated bucket were seen to hang until their deadline (nats-server
// 2.15), so each attempt is a bind or a plain create, bounded, retried.
func EnsureBucket(ctx context.Context, js jetstream.JetStream, ttl time.Duration, replicas int) (jetstream.KeyValue, error) {
	cfg := jetstream.KeyValueConfig{
		Bucket: Bucket, Description: "dispatcher members and DELIVERIES partition leases",
		TTL: ttl, History: 1, Replicas: max(replicas, 1), Storage: jetstream.FileStorage,
	}
	var last error
	for attempt := range 10 {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		kv, err := js.KeyValue(actx, Bucket)
		switch {
		case errors.Is(err, jetstream.ErrBucketNotFound):
			kv, err = js.CreateKeyValue(actx, cfg)
		case err == nil && !sameBucket(actx, kv, cfg):
			kv, err = js.UpdateKeyValue(actx, cfg) // TTL or replicas changed by the operator
		}
		cancel()
		if err == nil {
			return kv, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		// Another dispatcher may be creating it right now: back off a
		// little, differently for each, and bind again.
		time.Sleep(time.Duration(attempt+1)*100*time.Millisecond + time.Duration(rand.Int64N(int64(100*time.Millisecond))))
	}
	return nil, fmt.Errorf("lease: bucket: %w", last)
}

// sameBucket reports whether kv already has cfg's TTL and replicas.
func sameBucket(ctx context.Context, kv jetstream.KeyValue, cfg jetstream.KeyValueConfig) bool {
	st, err := kv.Status(ctx)
	if err != nil {
		return true // unknown: keep what is there
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return true
	}
	c := bs.StreamInfo().Config
	return c.MaxAge == cfg.TTL && c.Replicas == cfg.Replicas
}

func memberKey(id string) string { return "m." + id }
func partKey(p int) string       { return "p." + strconv.Itoa(p) }

// Owned returns the partitions this process holds now, sorted.
func (m *Manager) Owned() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for p, h := range m.owned {
		if !h.releasing {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Run takes part until ctx ends, then hands every partition back (soft
// stop, wait, delete the key) so the others take them at once.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	m.owned = map[int]*held{}
	m.mu.Unlock()
	tick := m.TTL / 3
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		m.round(ctx)
		select {
		case <-ctx.Done():
			m.releaseAll()
			return nil
		case <-t.C:
		}
	}
}

// round renews what is held, heartbeats, hands back what is no longer
// wanted and tries to take what is wanted and free. Renewals come first and
// each has its own budget, so a slow heartbeat or member listing (it needs
// the JetStream meta leader, which may be electing) cannot starve them.
// A renewal that times out is not a loss: the partition is kept until its
// key may have expired (2/3 of TTL since the last renewal); only a revision
// mismatch — someone else holds it, or it expired — is a loss at once.
func (m *Manager) round(ctx context.Context) {
	step := m.TTL / 3
	m.mu.Lock()
	for p, h := range m.owned {
		if h.releasing {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, step)
		rev, err := m.KV.Update(rctx, partKey(p), []byte(m.ID), h.rev)
		cancel()
		switch {
		case err == nil:
			h.rev, h.renewed = rev, time.Now()
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch) || time.Since(h.renewed) >= 2*m.TTL/3:
			m.Logger().Warn("lease: lost partition", "partition", p, "err", err)
			h.hard()
			h.soft()
			delete(m.owned, p)
		default:
			m.Logger().Warn("lease: renewal failed, kept for now", "partition", p, "err", err)
		}
	}
	m.mu.Unlock()

	rctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	if _, err := m.KV.Put(rctx, memberKey(m.ID), []byte(time.Now().UTC().Format(time.RFC3339))); err != nil {
		m.Logger().Warn("lease: heartbeat", "err", err)
	}
	members, err := m.members(rctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		// Keep the last list: an unreadable list must not make this
		// dispatcher hand back everything it holds.
		m.Logger().Warn("lease: members", "err", err)
		members = m.lastMembers
	}
	m.lastMembers = members
	me := slices.Index(members, m.ID)
	want := func(p int) bool { return me >= 0 && p%len(members) == me }
	for p, h := range m.owned {
		if !h.releasing && !want(p) && err == nil {
			m.release(p, h)
		}
	}
	for p := range m.Partitions {
		if _, ok := m.owned[p]; ok || !want(p) {
			continue
		}
		rev, err := m.KV.Create(rctx, partKey(p), []byte(m.ID))
		if err != nil {
			continue // held by another (or racing); retried next round
		}
		m.start(ctx, p, rev)
	}
}

func (m *Manager) members(ctx context.Context) ([]string, error) {
	lister, err := m.KV.ListKeysFiltered(ctx, "m.*")
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for k := range lister.Keys() {
		out = append(out, strings.TrimPrefix(k, "m."))
	}
	slices.Sort(out)
	return out, nil
}

func (m *Manager) start(ctx context.Context, p int, rev uint64) {
	hard, hcancel := context.WithCancel(context.WithoutCancel(ctx))
	soft, scancel := context.WithCancel(hard)
	h := &held{rev: rev, renewed: time.Now(), soft: scancel, hard: hcancel, done: make(chan struct{})}
	m.owned[p] = h
	m.Logger().Info("lease: took partition", "partition", p, "id", m.ID)
	go func() {
		defer close(h.done)
		m.Work(soft, hard, p)
	}()
}

// release soft-stops p's work and deletes its key (at the held revision)
// once the work has returned. Called with mu held.
func (m *Manager) release(p int, h *held) {
	h.releasing = true
	h.soft()
	go func() {
		<-h.done
		m.mu.Lock()
		rev := h.rev
		if m.owned[p] == h {
			delete(m.owned, p)
		}
		m.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.KV.Delete(ctx, partKey(p), jetstream.LastRevision(rev)); err != nil {
			m.Logger().Warn("lease: release", "partition", p, "err", err)
		}
		h.hard()
		m.Logger().Info("lease: released partition", "partition", p, "id", m.ID)
	}()
}

// releaseAll hands every partition back and waits; the member key goes too.
func (m *Manager) releaseAll() {
	m.mu.Lock()
	var waits []chan struct{}
	for p, h := range m.owned {
		if !h.releasing {
			m.release(p, h)
		}
		waits = append(waits, h.done)
	}
	m.mu.Unlock()
	for _, w := range waits {
		<-w
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.KV.Delete(ctx, memberKey(m.ID))
	// Give the deletes of the release goroutines a moment to land.
	for range 50 {
		m.mu.Lock()
		n := len(m.owned)
		m.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
