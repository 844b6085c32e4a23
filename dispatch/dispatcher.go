package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"oficina/dispatch/lease"
	"oficina/schema/ids"
	"oficina/schema/service"
	"oficina/streams"
)

// Dispatcher delivers webhooks from the DELIVERIES partitions it owns.
type Dispatcher struct {
	cfg   Config
	lease atomic.Pointer[lease.Manager]
	// The database work before and after each send, in group commits
	// (cycle.go).
	cycles *batcher[stageReq, stageRes]
	// certified are the clients of the endpoints with a client
	// certificate, one per certificate (its connections its own).
	certified sync.Map // sha256 of the certificate and key → *http.Client
	// tokens are the endpoints' OAuth2 bearer tokens (oauth2.go).
	tokens sync.Map // tokenKey → token
}

// A Dispatcher is a service: Run delivers until its context ends.
var _ service.Service = (*Dispatcher)(nil)

// New checks cfg and returns a Dispatcher; Run starts it.
func New(cfg Config) (*Dispatcher, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.ID == "" {
		cfg.ID = ids.New("dsp")
	}
	d := &Dispatcher{cfg: cfg}
	d.cycles = newBatcher(cfg.BatchSize, d.cycle)
	return d, nil
}

// ID names the dispatcher among its peers.
func (d *Dispatcher) ID() string { return d.cfg.ID }

// Run joins the partition sharing and delivers until ctx ends; then it
// hands its partitions back, letting sends in flight finish.
func (d *Dispatcher) Run(ctx context.Context) error {
	kv, err := lease.EnsureBucket(ctx, d.cfg.JS, d.cfg.LeaseTTL, d.cfg.LeaseReplicas)
	if err != nil {
		return err
	}
	m := &lease.Manager{KV: kv, ID: d.cfg.ID, Partitions: d.cfg.Partitions, TTL: d.cfg.LeaseTTL, Base: service.Base{Log: d.cfg.Logger()},
		Work: func(soft, hard context.Context, p int) {
			if err := d.runPartition(soft, hard, p); err != nil {
				d.cfg.Logger().Error("dispatch: partition", "partition", p, "err", err)
			}
		}}
	d.lease.Store(m)
	// The batchers outlive m.Run: partitions handed back at shutdown let
	// their sends in flight finish and record them.
	bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { d.cycles.loop(bctx, d.cfg.BatchWorkers) })
	defer func() { stop(); wg.Wait() }()
	d.cfg.Logger().Info("dispatcher running", "id", d.cfg.ID, "partitions", d.cfg.Partitions)
	return m.Run(ctx)
}

// Owned returns the partitions this dispatcher holds now.
func (d *Dispatcher) Owned() []int {
	m := d.lease.Load()
	if m == nil {
		return nil
	}
	return m.Owned()
}

// handle runs one delivery message: checks (prepared ahead when pre
// holds a fresh plan), the attempt, its record. health reports the endpoint's failing state as read from the database;
// answered is told, right after the send and before its record, whether
// the receiver answered 2xx: the endpoint's slot is free from then on
// (decision 0031), the record only holds the message. It may name a
// delivery to prepare in the record's own cycle, after it, and the ahead
// that gets its plan: the next of the message's object (decision 0039).
func (d *Dispatcher) handle(ctx context.Context, dm streams.DeliveryMessage, pre *ahead, health func(failing bool),
	answered func(ok bool) (*streams.DeliveryMessage, *ahead)) (outcome, error) {
	res, err := d.plan(ctx, dm, pre)
	pl := res.plan
	if err != nil {
		return outcome{}, err
	}
	if pl.closed != "" {
		// Closed without an attempt: an outcome like the others, recorded
		// by the next cycle (the record stage is its one writer).
		res, err = d.cycles.do(ctx, stageReq{record: &recordReq{dm: dm, closed: pl.closed}})
		if err == nil && res.out.closed {
			d.cfg.Observer.Closed(pl.closed)
		}
		return res.out, err
	}
	if pl.blocked != nil {
		return outcome{blocked: pl.blocked}, nil
	}
	if !pl.send {
		return outcome{}, nil
	}
	health(pl.failing)
	started, clock := d.cfg.BusinessNow(), d.cfg.WallNow()
	r := d.send(ctx, dm, pl, started)
	if ctx.Err() != nil {
		return outcome{}, ctx.Err() // lease lost mid-send: the next owner retries
	}
	done := d.cfg.WallNow()
	next, nextPre := answered(r.ok())
	d.observeAttempt(dm.DeliveryID, r, done.Sub(clock), done)
	rec := &recordReq{dm: dm, started: started, r: r, disable: r.control == controlDisable}
	if !r.ok() && r.control != controlAbort {
		// abort-message: the receiver wants no more tries of this message,
		// so its failure is final.
		rec.retryIn, rec.retry = d.cfg.retryDelay(pl.attempts+1, r.retryAfter)
	}
	// The send is done: a record that fails (the database restarting) is
	// retried while the message is still ours, since giving up would park
	// the message and send the delivery again (found by ops/proving/chaos).
	req, sent := stageReq{record: rec, next: next}, time.Now()
	res, err = d.cycles.do(ctx, req)
	for wait := 100 * time.Millisecond; err != nil && ctx.Err() == nil && time.Since(sent) < d.cfg.AckWait/2; wait = min(2*wait, 2*time.Second) {
		d.cfg.Logger().Warn("dispatch: record failed after the send; retrying", "delivery", dm.DeliveryID, "err", err)
		sleepCtx(ctx, wait)
		res, err = d.cycles.do(ctx, req)
	}
	if nextPre != nil {
		nextPre.fill(res.next, err, d.cfg.WallNow())
	}
	out := res.out
	if err == nil {
		if out.gaveUp {
			d.cfg.Observer.GaveUp()
		}
		if out.disabled {
			d.cfg.Observer.EndpointDisabled()
		}
	}
	return out, err
}
