package dispatch

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"oficina/streams"
)

// Preparing ahead: a job queued behind its endpoint's cap is prepared while
// it waits (its views read, its secrets opened), so when a slot frees its
// send starts at once and the slot is held by the send alone, not by a
// cycle's wait as well. Only the front of each queue is prepared ahead —
// the jobs the next slots take —, so what a full partition parks (the
// newest queued) was not read for nothing.

// aheadDepth is how many jobs at the front of an endpoint's queue are
// prepared ahead: the endpoint's next wave of sends.
const aheadDepth = DefaultEndpointCap

// ahead is a job's plan prepared while it waits. A job is copied through
// the gate's queues; they all share one ahead.
type ahead struct {
	launched atomic.Bool
	done     chan struct{}
	res      stageRes
	err      error
	at       time.Time // when the plan was read (wall clock)
}

func newAhead() *ahead { return &ahead{done: make(chan struct{})} }

// launch starts preparing dm with spawn unless that has started already.
func (a *ahead) launch(ctx context.Context, d *Dispatcher, dm streams.DeliveryMessage, spawn func(func())) {
	if !a.launched.CompareAndSwap(false, true) {
		return
	}
	spawn(func() {
		defer close(a.done)
		a.res, a.err = d.cycles.do(ctx, stageReq{prepare: &dm})
		a.at = d.cfg.WallNow()
	})
}

// errNotPrepared fills an ahead whose plan was to be read with another
// request and was not: its job reads one when it starts.
var errNotPrepared = errors.New("dispatch: not prepared with the record before it")

// fill completes a, launched elsewhere, with the plan read in another
// request's cycle (fill's p, nil when none was read) at at.
func (a *ahead) fill(p *plan, err error, at time.Time) {
	switch {
	case err != nil:
		a.err = err
	case p == nil:
		a.err = errNotPrepared
	default:
		a.res = stageRes{plan: *p}
	}
	a.at = at
	close(a.done)
}

// plan is dm's plan: the one prepared ahead when it is there and fresh,
// otherwise one read now.
func (d *Dispatcher) plan(ctx context.Context, dm streams.DeliveryMessage, a *ahead) (stageRes, error) {
	if a != nil && a.launched.Load() {
		select {
		case <-a.done:
			if a.err == nil && d.cfg.WallNow().Sub(a.at) <= d.cfg.PlanFresh {
				return a.res, nil
			}
		case <-ctx.Done():
			return stageRes{}, ctx.Err()
		}
	}
	return d.cycles.do(ctx, stageReq{prepare: &dm})
}
