package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"oficina/schema/service"
)

// PresenceKey is the entry, in the rate-limit bucket, where API processes
// note that they are alive. Company ids have no dot, so it meets none.
const PresenceKey = "processes.api"

// PresenceConfig tunes a Presence. Zero fields take the defaults.
type PresenceConfig struct {
	// ID names this process among the others (default: random).
	ID string
	// Every is the heartbeat interval (default 2 s).
	Every time.Duration
	// Stale is how long a process unheard of still counts (default 3 ×
	// Every): a process killed without leaving makes the others' shares
	// smaller for that long, which errs on the safe side.
	Stale time.Duration
	// Base: its business clock (Now) stamps the heartbeats, the clock of
	// the Limiter it serves.
	service.Base
}

// Presence is this API process among those sharing the budgets: each
// renews its heartbeat in one shared entry (a map of process id to last
// heartbeat, changed by compare-and-swap) and reads the others' from it.
// While the store is unreachable the last view stands: N and this
// process's rank among them, which give its share of every ceiling.
type Presence struct {
	store Store
	cfg   PresenceConfig

	mu   sync.Mutex
	seen map[string]int64 // process id → last heartbeat (Unix ms)
	view atomic.Pointer[presenceView]
}

type presenceView struct{ rank, n int }

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// NewPresence returns the presence of this process in store. Until its
// first Beat succeeds the process knows of no other and counts alone.
func NewPresence(store Store, cfg PresenceConfig) *Presence {
	if cfg.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.ID = hex.EncodeToString(b[:])
	}
	if cfg.Every <= 0 {
		cfg.Every = 2 * time.Second
	}
	if cfg.Stale <= 0 {
		cfg.Stale = 3 * cfg.Every
	}
	return &Presence{store: store, cfg: cfg, seen: map[string]int64{}}
}

// ID is this process's name in the presence entry.
func (p *Presence) ID() string { return p.cfg.ID }

// Processes is how many API processes were live at the last heartbeat
// that reached the store (0: none has yet).
func (p *Presence) Processes() int {
	if p == nil {
		return 1
	}
	if v := p.view.Load(); v != nil {
		return v.n
	}
	return 0
}

// Share is this process's part of a ceiling: ceiling/N, the remainder
// going one each to the first processes by id, so the shares of the N
// processes add up to the ceiling exactly. Without a view (no heartbeat
// reached the store yet) the process counts alone: it can only be
// started with NATS reachable, so that is a brief window.
func (p *Presence) Share(ceiling int) int {
	if p == nil {
		return ceiling
	}
	v := p.view.Load()
	if v == nil || v.n <= 1 {
		return ceiling
	}
	share := ceiling / v.n
	if v.rank < ceiling%v.n {
		share++
	}
	return share
}

// maxBeatAttempts bounds compare-and-swap rounds of one heartbeat.
const maxBeatAttempts = 5

// Beat renews this process's heartbeat, drops processes unheard of for
// Stale and updates the view. On error the last view stands.
func (p *Presence) Beat(ctx context.Context) error {
	return p.change(ctx, func(m map[string]int64, now int64) { m[p.cfg.ID] = now })
}

// Leave marks this process gone (at shutdown: a negative time), so the
// others' shares grow at their next heartbeat rather than after Stale.
// (A process merely absent from the entry may have been lost with it in a
// NATS restart, so absence alone does not remove one.)
func (p *Presence) Leave(ctx context.Context) error {
	return p.change(ctx, func(m map[string]int64, now int64) { m[p.cfg.ID] = -now })
}

func (p *Presence) change(ctx context.Context, edit func(m map[string]int64, now int64)) error {
	for range maxBeatAttempts {
		state, rev, err := p.store.Load(ctx, PresenceKey)
		if err != nil {
			return err
		}
		m := map[string]int64{}
		if len(state) > 0 {
			if err := json.Unmarshal(state, &m); err != nil {
				m = map[string]int64{} // unreadable: the next heartbeats rebuild it
			}
		}
		now := p.cfg.BusinessNow().UnixMilli()
		for id, at := range m {
			if now-abs(at) > p.cfg.Stale.Milliseconds() {
				delete(m, id)
			}
		}
		edit(m, now)
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("ratelimit: presence: %w", err)
		}
		_, err = p.store.Swap(ctx, PresenceKey, b, rev)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		p.update(m, now)
		return nil
	}
	return ErrContention
}

// update merges what the store said with what this process saw before (a
// NATS restart loses the entry: processes that were live a moment ago
// still are), and computes the view.
func (p *Presence) update(m map[string]int64, now int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, at := range m {
		if at < 0 {
			delete(p.seen, id) // left
			continue
		}
		p.seen[id] = max(p.seen[id], at)
	}
	for id, at := range p.seen {
		if now-at > p.cfg.Stale.Milliseconds() {
			delete(p.seen, id)
		}
	}
	ids := make([]string, 0, len(p.seen)+1)
	for id := range p.seen {
		ids = append(ids, id)
	}
	if !slices.Contains(ids, p.cfg.ID) {
		ids = append(ids, p.cfg.ID)
	}
	slices.Sort(ids)
	p.view.Store(&presenceView{rank: slices.Index(ids, p.cfg.ID), n: len(ids)})
}
