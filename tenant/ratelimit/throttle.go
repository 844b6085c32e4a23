package ratelimit

import (
	"net/netip"
	"sync"
	"time"
)

// DefaultAuthFailures is the failure ceiling per client address and minute
// (spec 5 item 3 leaves it open; docs/api.md).
const DefaultAuthFailures = 20

// maxTracked bounds the addresses a Throttle remembers, so a flood from
// many addresses costs bounded memory; beyond it new addresses go
// untracked until old ones expire.
const maxTracked = 100_000

// Throttle refuses a client address that failed authentication `limit`
// times within the window, before its key is even looked at. Only failures
// are counted, so normal use never gets near it. It lives in one process:
// with N API processes an address gets at most N×limit failures a window.
// IPv6 addresses count per /64, the block one subscriber usually holds.
type Throttle struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu      sync.Mutex
	by      map[netip.Prefix][]time.Time // failure times, oldest first
	sweptAt time.Time
}

// NewThrottle returns a throttle of limit failures per window; now is the
// clock (nil: time.Now).
func NewThrottle(limit int, window time.Duration, now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	return &Throttle{limit: limit, window: window, now: now, by: map[netip.Prefix][]time.Time{}}
}

func source(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p
	}
	if ip.Is4() {
		p, _ := ip.Prefix(32)
		return p
	}
	return netip.Prefix{}
}

// Check reports whether ip may try to authenticate now; when it may not,
// wait is how long until its oldest counted failure leaves the window
// (Retry-After). A nil Throttle allows everything.
func (t *Throttle) Check(ip netip.Addr) (wait time.Duration, ok bool) {
	if t == nil {
		return 0, true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := source(ip)
	fs := t.by[key]
	if len(fs) < t.limit {
		return 0, true
	}
	now := t.now()
	fs = t.prune(key, fs, now)
	if len(fs) < t.limit {
		return 0, true
	}
	return fs[len(fs)-t.limit].Add(t.window).Sub(now), false
}

// Failed counts one authentication failure of ip.
func (t *Throttle) Failed(ip netip.Addr) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if now.Sub(t.sweptAt) > t.window {
		t.sweep(now)
	}
	key := source(ip)
	fs, ok := t.by[key]
	if !ok && len(t.by) >= maxTracked {
		t.sweep(now)
		if len(t.by) >= maxTracked {
			return
		}
	}
	fs = append(t.prune(key, fs, now), now)
	if len(fs) > t.limit {
		fs = fs[len(fs)-t.limit:]
	}
	t.by[key] = fs
}

// prune drops failures that left the window and stores the rest.
func (t *Throttle) prune(key netip.Prefix, fs []time.Time, now time.Time) []time.Time {
	cutoff := now.Add(-t.window)
	i := 0
	for i < len(fs) && !fs[i].After(cutoff) {
		i++
	}
	if i == 0 {
		return fs
	}
	fs = append(fs[:0], fs[i:]...)
	if len(fs) == 0 {
		delete(t.by, key)
	} else {
		t.by[key] = fs
	}
	return fs
}

func (t *Throttle) sweep(now time.Time) {
	t.sweptAt = now
	for k, fs := range t.by {
		t.prune(k, fs, now)
	}
}
