// Package ratelimit holds the API's budgets (spec part 8 and 5 item 3):
//
//   - Limiter: a company's requests in a sliding window (the last 60 s),
//     exact across API processes: each budget is one JetStream KV entry
//     holding the log of the requests it counted, changed only by
//     compare-and-swap on its revision (docs/decisions).
//   - Throttle: authentication failures per client address, in process.
//
// Both read an injected clock so tests move time instead of waiting.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Config tunes a Limiter. Zero fields take the defaults.
type Config struct {
	// Window is the sliding window (spec: 60 s).
	Window time.Duration
	// Now is the clock (default time.Now). Processes sharing a budget
	// should agree on the time (NTP): a skew of d moves the window's edge
	// by d for the requests that process counts.
	Now func() time.Time
	// Timeout bounds one store operation (default 1 s).
	Timeout time.Duration
}

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
}

// ResetSeconds is Reset rounded up to whole seconds (RateLimit-Reset and
// Retry-After): waiting that long is always enough.
func (d Decision) ResetSeconds() int {
	return int((d.Reset + time.Second - 1) / time.Second)
}

// ErrContention is returned when a budget kept changing under us (other
// processes) for every attempt; callers fail open.
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
}

type waiter struct {
	limit int
	wake  chan struct{}
	done  bool
	d     Decision
	err   error
}

// New returns a limiter over store.
func New(store Store, cfg Config) *Limiter {
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Second
	}
	return &Limiter{store: store, cfg: cfg, lines: map[string]*line{}}
}

// Window is the limiter's sliding window.
func (l *Limiter) Window() time.Duration { return l.cfg.Window }

// Take counts one request against the budget key whose ceiling is limit
// (> 0) and says whether it may go on. A refused request is not counted.
// On a store error the decision is unknown; callers choose to fail open.
func (l *Limiter) Take(ctx context.Context, key string, limit int) (Decision, error) {
	if limit <= 0 {
		return Decision{}, fmt.Errorf("ratelimit: limit %d must be positive", limit)
	}
	ln := l.line(key)
	w := &waiter{limit: limit, wake: make(chan struct{}, 1)}
	ln.mu.Lock()
	ln.queue = append(ln.queue, w)
	ln.usedAt = l.cfg.Now()
	if ln.busy {
		ln.mu.Unlock()
		<-w.wake
		if w.done {
			return w.d, w.err
		}
	} else {
		ln.busy = true
		ln.mu.Unlock()
	}
	l.lead(ctx, key, ln)
	return w.d, w.err
}

// lead decides the queued batch (which holds the leader itself), wakes its
// waiters and hands leadership to the first request that queued meanwhile.
func (l *Limiter) lead(ctx context.Context, key string, ln *line) {
	ln.mu.Lock()
	batch := ln.queue
	ln.queue = nil
	ln.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.Timeout)
	l.decide(ctx, key, ln, batch)
	cancel()

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
// stored (or need no storing).
func (l *Limiter) decide(ctx context.Context, key string, ln *line, batch []*waiter) {
	fail := func(err error) {
		ln.known = false
		for _, w := range batch {
			w.d, w.err = Decision{}, err
		}
	}
	for range maxAttempts {
		if !ln.known {
			state, rev, err := l.store.Load(ctx, key)
			if err != nil {
				fail(err)
				return
			}
			ln.state, ln.rev, ln.known = state, rev, true
		}
		win, err := decodeWindow(ln.state)
		if err != nil {
			win = window{} // unreadable state counts nothing rather than blocking the company
		}
		now := l.cfg.Now()
		counted, keep := false, 0
		for _, w := range batch {
			w.d = l.take(&win, now, w.limit)
			counted = counted || w.d.Allowed
			keep = max(keep, w.limit)
		}
		if !counted {
			return
		}
		win.keepLast(keep)
		state := win.encode()
		rev, err := l.store.Swap(ctx, key, state, ln.rev)
		switch {
		case errors.Is(err, ErrConflict):
			ln.known = false
			continue
		case err != nil:
			fail(err)
			return
		}
		ln.state, ln.rev = state, rev
		return
	}
	fail(ErrContention)
}

// take decides one request at now against win and counts it when allowed.
func (l *Limiter) take(win *window, now time.Time, limit int) Decision {
	span := l.cfg.Window.Milliseconds()
	ms := now.UnixMilli()
	win.prune(ms - span)
	c := win.total()
	d := Decision{Limit: limit}
	if c < limit {
		win.add(quantize(ms, limit, span))
		c++
		d.Allowed = true
	}
	d.Remaining = max(0, limit-c)
	// With room left the next slot opens when the oldest leaves; when
	// full, when the request at c-limit (oldest first) does.
	at := win.nth(max(0, c-limit))
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
	if now := l.cfg.Now(); now.Sub(l.sweptAt) > l.cfg.Window {
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
