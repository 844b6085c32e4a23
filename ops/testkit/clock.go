package testkit

import (
	"sync/atomic"
	"time"
)

// Clock is a goroutine-safe clock that moves only when told: hand its Now
// to what takes a clock.
type Clock struct{ ns atomic.Int64 }

// NewClock is a clock stopped at t.
func NewClock(t time.Time) *Clock {
	c := &Clock{}
	c.Set(t)
	return c
}

// NowClock is a clock stopped at the current second (UTC).
func NowClock() *Clock { return NewClock(time.Now().UTC().Truncate(time.Second)) }

// Now is the clock's time, in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }
