// Package ratelimit holds the API's budgets (spec part 8 and 5 item 3):
//
//   - Limiter: a company's requests in a sliding window (the last 60 s),
//     exact across API processes: each budget is one JetStream KV entry
//     holding the log of the requests it counted, changed only by
//     compare-and-swap on its revision (docs/decisions 0009). While that
//     store is unreachable each process enforces its share of the ceiling
//     in process (Presence says how many share it; decision 0018).
//   - Throttle: authentication failures per client address, in process.
//
// Both read an injected clock so tests move time instead of waiting.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"oficina/schema/service"
)

// Config tunes a Limiter. Zero fields take the defaults.
type Config struct {
	// Base: Log is told when decisions move to the share and back. The
	// business clock (Now) is the limiter's one clock: the window is a
	// rule, and the backoff and the idle sweep are measured against the
	// window's own stamps, so a test that moves it moves them all.
	// Processes sharing a budget should agree on the time (NTP): a skew of
	// d moves the window's edge by d for the requests that process counts.
	service.Base
	// Window is the sliding window (spec: 60 s).
	Window time.Duration
	// Timeout bounds one store round trip (default 100 ms): past it the
	// request is decided by this process's share instead.
	Timeout time.Duration
	// Backoff is how long after a failed round trip requests are decided
	// by the share without trying the store (default 1 s), so a store
	// that hangs costs one Timeout a Backoff, not one a request.
	Backoff time.Duration
	// Presence says which share of a ceiling is this process's while the
	// store is unreachable. Nil: the whole ceiling (a process alone).
	Presence *Presence
	// Fallback, when set, is told how many requests were just decided by
	// this process's share alone, the store out of reach (metrics).
	Fallback func(requests int)
}

// Defaults of Config.
const (
	DefaultTimeout = 100 * time.Millisecond
	DefaultBackoff = time.Second
)

// Decision is the outcome of one request against a budget.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is how long until the next slot opens: until the oldest
	// request still counted leaves the window, or, when the budget is
	// spent, until the request whose departure lets one more in leaves —
	// which is then exactly when a retry succeeds.
	Reset time.Duration
	// Local: the shared budget was unreachable, and the request was
	// decided by this process's share of the ceiling (Limit is still the
	// ceiling; Remaining and Reset are this process's).
	Local bool
}

// ResetSeconds is Reset rounded up to whole seconds (RateLimit-Reset and
// Retry-After): waiting that long is always enough.
func (d Decision) ResetSeconds() int {
	return int((d.Reset + time.Second - 1) / time.Second)
}

// ErrContention is the failure of a batch whose budget kept changing under
// us (other processes) for every attempt; the batch is then decided by the
// share.
var ErrContention = errors.New("ratelimit: budget changed on every attempt")

// maxAttempts bounds compare-and-swap rounds for one batch.
const maxAttempts = 8

// exactPairs is the most (time, count) pairs a budget keeps at millisecond
// precision. Budgets above it (overrides beyond every plan) count in
// coarser steps so their state stays a few kilobytes whatever the traffic.
const exactPairs = 1000

// Limiter counts requests against budgets in a Store. Requests for one
// budget arriving together in a process are decided in one batch: one
// store round trip for the batch, none when every one of them is refused
// (a log that is full here is full in the store too).
type Limiter struct {
	store Store
	cfg   Config

	// downUntil (Unix ns on the business clock) is when the store may be
	// tried again after a failure; trouble is when the store was last
	// known unreachable; local says decisions are on the share (for the
	// log).
	downUntil atomic.Int64
	trouble   atomic.Int64
	local     atomic.Bool

	mu      sync.Mutex
	lines   map[string]*line
	sweptAt time.Time
}

// line is one budget as this process knows it. The leader (the request
// currently talking to the store) alone touches the cached state.
type line struct {
	mu     sync.Mutex
	queue  []*waiter
	busy   bool
	usedAt time.Time

	known bool
	state []byte
	rev   uint64

	// own is what this process allowed (stored or not), its most recent
	// `limit`: while the store is unreachable, and for a window after, the
	// process allows only while own holds fewer than its share. pending
	// is what it allowed while the store was unreachable, not yet in the
	// shared log: the next stored decision (or Flush) merges it in.
	own     window
	pending window
	limit   int // the last ceiling seen
}

type waiter struct {
	limit int
	wake  chan struct{}
	done  bool
	d     Decision
}

// A Limiter is a service: Run keeps its presence until its context ends.
var _ service.Service = (*Limiter)(nil)

// New returns a limiter over store.
func New(store Store, cfg Config) *Limiter {
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Fallback == nil {
		cfg.Fallback = func(int) {}
	}
	return &Limiter{store: store, cfg: cfg, lines: map[string]*line{}}
}

// Window is the limiter's sliding window.
func (l *Limiter) Window() time.Duration { return l.cfg.Window }

// Take counts one request against the budget key whose ceiling is limit
// (> 0) and says whether it may go on. A refused request is not counted.
// It fails only for a limit that is not positive: when the store cannot
// decide, this process's share does (Decision.Local).
func (l *Limiter) Take(ctx context.Context, key string, limit int) (Decision, error) {
	if limit <= 0 {
		return Decision{}, fmt.Errorf("ratelimit: limit %d must be positive", limit)
	}
	ln := l.line(key)
	w := &waiter{limit: limit, wake: make(chan struct{}, 1)}
	ln.mu.Lock()
	ln.queue = append(ln.queue, w)
	ln.usedAt = l.cfg.BusinessNow()
	if ln.busy {
		ln.mu.Unlock()
		<-w.wake
		if w.done {
			return w.d, nil
		}
	} else {
		ln.busy = true
		ln.mu.Unlock()
	}
	l.lead(ctx, key, ln)
	return w.d, nil
}

// lead decides the queued batch (which holds the leader itself), wakes its
// waiters and hands leadership to the first request that queued meanwhile.
// An empty batch (Flush) only stores what the share allowed.
func (l *Limiter) lead(ctx context.Context, key string, ln *line) {
	ln.mu.Lock()
	batch := ln.queue
	ln.queue = nil
	ln.mu.Unlock()
	if err := l.storeDown(); err != nil {
		l.decideLocal(ln, batch, err)
	} else {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.Timeout)
		err := l.decide(ctx, key, ln, batch)
		cancel()
		if err != nil {
			l.failed(err)
			l.decideLocal(ln, batch, err)
		} else if len(batch) > 0 && l.local.CompareAndSwap(true, false) {
			l.cfg.Logger().Info("rate limits: shared budget reachable again; shares still apply for one window")
		}
	}
	for _, w := range batch {
		w.done = true
	}
	var next *waiter
	ln.mu.Lock()
	if len(ln.queue) > 0 {
		next = ln.queue[0]
	} else {
		ln.busy = false
	}
	ln.mu.Unlock()
	for _, w := range batch {
		w.wake <- struct{}{}
	}
	if next != nil {
		next.wake <- struct{}{} // not done: it leads the next batch
	}
}

// decide runs compare-and-swap rounds until the batch's decisions are
// stored (or need no storing), with what the share allowed meanwhile
// merged into the log first. Within a window of the store being
// unreachable, a request also needs room in this process's share (see
// decideLocal). An error leaves the batch undecided.
func (l *Limiter) decide(ctx context.Context, key string, ln *line, batch []*waiter) error {
	for _, w := range batch {
		ln.limit = w.limit
	}
	for range maxAttempts {
		if !ln.known {
			state, rev, err := l.store.Load(ctx, key)
			if err != nil {
				ln.known = false
				return err
			}
			ln.state, ln.rev, ln.known = state, rev, true
		}
		win, err := decodeWindow(ln.state)
		if err != nil {
			win = window{} // unreadable state counts nothing rather than blocking the company
		}
		win.merge(ln.pending)
		now := l.cfg.BusinessNow()
		ms, span := now.UnixMilli(), l.cfg.Window.Milliseconds()
		capped := l.capped(now)
		counted, keep, added := false, ln.limit, 0
		for _, w := range batch {
			d := l.judge(&win, ms, w.limit, 0)
			if capped {
				d = combine(d, l.judgeShare(&ln.own, ms, w.limit, added))
			}
			if d.Allowed {
				win.add(quantize(ms, w.limit, span))
				added++
			}
			w.d = d
			counted = counted || d.Allowed
			keep = max(keep, w.limit)
		}
		if !counted && ln.pending.total() == 0 {
			return nil // refused: the log is full here, so it is in the store too
		}
		win.prune(ms - span)
		win.keepLast(keep)
		state := win.encode()
		rev, err := l.store.Swap(ctx, key, state, ln.rev)
		switch {
		case errors.Is(err, ErrConflict):
			ln.known = false
			continue
		case err != nil:
			ln.known = false
			return err
		}
		ln.state, ln.rev = state, rev
		ln.pending = window{}
		for _, w := range batch {
			if w.d.Allowed {
				ln.own.add(quantize(ms, w.limit, span))
			}
		}
		ln.own.keepLast(keep)
		return nil
	}
	ln.known = false
	return ErrContention
}

// judge decides one request at ms against win without counting it: win
// already holds extra more requests at ms than it says (this batch's).
func (l *Limiter) judge(win *window, ms int64, limit, extra int) Decision {
	span := l.cfg.Window.Milliseconds()
	win.prune(ms - span)
	held := win.total()
	c := held + extra
	d := Decision{Limit: limit}
	if c < limit {
		c++
		d.Allowed = true
	}
	d.Remaining = max(0, limit-c)
	// With room left the next slot opens when the oldest leaves; when
	// full, when the request at c-limit (oldest first) does.
	at := ms
	if i := max(0, c-limit); i < held {
		at = win.nth(i)
	}
	d.Reset = time.Duration(at+span-ms) * time.Millisecond
	return d
}

// quantize keeps budgets up to exactPairs exact to the millisecond and
// rounds the times of larger ones down to span/exactPairs, which bounds a
// log to about exactPairs pairs (a request then leaves at most that step
// early).
func quantize(ms int64, limit int, span int64) int64 {
	if limit <= exactPairs {
		return ms
	}
	step := (span + exactPairs - 1) / exactPairs
	return ms - ms%step
}

// line returns the budget's line, dropping lines idle for two windows.
func (l *Limiter) line(key string) *line {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.cfg.BusinessNow(); now.Sub(l.sweptAt) > l.cfg.Window {
		l.sweptAt = now
		for k, ln := range l.lines {
			if !ln.mu.TryLock() {
				continue
			}
			idle := !ln.busy && now.Sub(ln.usedAt) > 2*l.cfg.Window
			ln.mu.Unlock()
			if idle {
				delete(l.lines, k)
			}
		}
	}
	ln := l.lines[key]
	if ln == nil {
		ln = &line{}
		l.lines[key] = ln
	}
	return ln
}
