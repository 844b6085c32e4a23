package ratelimit

import (
	"context"
	"errors"
	"time"
)

// ErrUnavailable is a store that knows it cannot answer (NATS
// disconnected): the request is decided by the share at once instead of
// waiting for a deadline.
var ErrUnavailable = errors.New("ratelimit: shared budget unreachable")

// errBackoff is why a request did not try the store: a recent failure.
var errBackoff = errors.New("ratelimit: shared budget failed recently")

// Unreachable notes that the shared budget is, or just was, out of reach
// (the stack calls it on every change of the NATS connection's state):
// from now until one window has passed, every decision also keeps to this
// process's share. What the shares allowed meanwhile is not in the shared
// log, and a NATS restart may lose the log itself; a window later both
// have left it.
func (l *Limiter) Unreachable() {
	l.trouble.Store(l.cfg.BusinessNow().UnixNano())
}

// capped says whether decisions keep to the share at now.
func (l *Limiter) capped(now time.Time) bool {
	t := l.trouble.Load()
	return t != 0 && now.UnixNano() < t+int64(l.cfg.Window)
}

// storeDown says why the store is not to be tried now, or nil.
func (l *Limiter) storeDown() error {
	if l.cfg.BusinessNow().UnixNano() < l.downUntil.Load() {
		return errBackoff
	}
	return nil
}

// failed notes a failed round trip. Unless the store knew at once that it
// was unavailable, requests skip it for Backoff: a store that hangs then
// costs one Timeout a Backoff rather than one a request.
func (l *Limiter) failed(err error) {
	l.Unreachable()
	if !errors.Is(err, ErrUnavailable) {
		l.downUntil.Store(l.cfg.BusinessNow().Add(l.cfg.Backoff).UnixNano())
	}
}

// decideLocal decides the batch by this process's share of each ceiling:
// allowed while what this process allowed in the window (before the
// outage too) is under its share, and while the shared log as this process
// last saw it, with what its share allowed since, has room. The shares of
// the live processes add up to the ceiling; the second condition covers a
// process that allowed more than its share before the outage (the
// balancer sent it more), whose excess the others' shares cannot know of
// otherwise (decision 0018).
func (l *Limiter) decideLocal(ln *line, batch []*waiter, cause error) {
	if len(batch) == 0 {
		return
	}
	l.cfg.Fallback(len(batch))
	if !l.local.Swap(true) {
		l.cfg.Logger().Warn("rate limits: shared budget unreachable; each company gets this process's share of its ceiling",
			"processes", l.cfg.Presence.Processes(), "error", cause)
	}
	now := l.cfg.BusinessNow()
	ms, span := now.UnixMilli(), l.cfg.Window.Milliseconds()
	seen, err := decodeWindow(ln.state)
	if err != nil {
		seen = window{} // as decide: unreadable state counts nothing
	}
	stored := seen.clone() // the shared log as last read, without what this process allowed since
	seen.merge(ln.pending)
	n := max(1, l.cfg.Presence.Processes())
	keep := 0
	for _, w := range batch {
		ln.limit = w.limit
		d := combine(l.judge(&seen, ms, w.limit, 0), l.judgeShare(&ln.own, ms, w.limit, 0))
		// The fair share of the room the log left: the log as last read
		// may miss what another process allowed after it, so every
		// request allowed here counts as if each of the n processes
		// allowed one (decision 0018, "around the outage").
		d = combine(d, l.judge(&stored, ms, w.limit, n*(ln.pending.since(ms-span)+1)-1))
		if d.Allowed {
			at := quantize(ms, w.limit, span)
			ln.own.add(at)
			ln.pending.add(at)
			seen.add(at)
		}
		d.Local = true
		w.d = d
		keep = max(keep, w.limit)
	}
	ln.own.keepLast(keep)
	ln.pending.keepLast(keep)
}

// Flush stores what the share allowed while the store was unreachable into
// the shared log of every budget that has some (the stack calls it when
// NATS is back, Run every heartbeat), so the shared budget counts it —
// also for companies whose next request goes to another process, and
// after the window in which the shares hold. Budgets busy with a request
// are left to it: its stored decision merges them.
func (l *Limiter) Flush(ctx context.Context) {
	if l.storeDown() != nil {
		return
	}
	l.mu.Lock()
	keys := make([]string, 0, len(l.lines))
	lines := make([]*line, 0, len(l.lines))
	for k, ln := range l.lines {
		keys, lines = append(keys, k), append(lines, ln)
	}
	l.mu.Unlock()
	for i, ln := range lines {
		ln.mu.Lock()
		if ln.busy || ln.pending.total() == 0 {
			ln.mu.Unlock()
			continue
		}
		ln.busy = true
		ln.mu.Unlock()
		l.lead(ctx, keys[i], ln)
	}
}

// judgeShare decides one request at ms against this process's share of
// limit, given what it allowed (own, plus extra at ms). Limit stays the
// ceiling: it is the company's, whichever process answers.
func (l *Limiter) judgeShare(own *window, ms int64, limit, extra int) Decision {
	share := l.cfg.Presence.Share(limit)
	if share <= 0 {
		// More processes than requests a window: this one has none of
		// them; the others do.
		return Decision{Limit: limit, Reset: l.cfg.Window}
	}
	d := l.judge(own, ms, share, extra)
	d.Limit = limit
	return d
}

// combine is the decision of a request that needs room both in the
// shared log (s) and in this process's share (o).
func combine(s, o Decision) Decision {
	d := s
	d.Allowed = s.Allowed && o.Allowed
	switch {
	case d.Allowed:
		d.Remaining = min(s.Remaining, o.Remaining)
		d.Reset = min(s.Reset, o.Reset)
	case s.Allowed:
		d.Remaining, d.Reset = 0, o.Reset
	case o.Allowed:
		d.Remaining, d.Reset = 0, s.Reset
	default:
		d.Remaining, d.Reset = 0, max(s.Reset, o.Reset)
	}
	return d
}

// Run keeps this process's presence (Config.Presence) and flushes what
// the share allowed, every heartbeat, until ctx ends; then it withdraws the
// presence and returns nil (service.Service). Without a presence it only
// waits for ctx.
func (l *Limiter) Run(ctx context.Context) error {
	p := l.cfg.Presence
	if p == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(p.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_ = p.Leave(lctx)
			cancel()
			return nil
		case <-t.C:
		}
		bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
		if err := p.Beat(bctx); err != nil {
			l.Unreachable()
			if !errors.Is(err, ErrUnavailable) {
				l.cfg.Logger().Debug("rate limits: presence not renewed", "error", err)
			}
		}
		cancel()
		l.Flush(ctx)
	}
}

// Local says whether the last decision was by this process's share (the
// shared budget out of reach).
func (l *Limiter) Local() bool { return l.local.Load() }

// Processes is how many API processes share the budgets as this process
// last saw them (1 without a presence, 0 before its first heartbeat).
func (l *Limiter) Processes() int { return l.cfg.Presence.Processes() }

// Pending is how many requests the shares allowed that are not in the
// shared log yet (budgets busy at the moment are not counted).
func (l *Limiter) Pending() int {
	l.mu.Lock()
	lines := make([]*line, 0, len(l.lines))
	for _, ln := range l.lines {
		lines = append(lines, ln)
	}
	l.mu.Unlock()
	n := 0
	for _, ln := range lines {
		ln.mu.Lock()
		if !ln.busy {
			n += ln.pending.total()
		}
		ln.mu.Unlock()
	}
	return n
}
