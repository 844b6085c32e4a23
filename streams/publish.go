package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/db"
	"oficina/schema/service"
	"oficina/tenant"
)

// Publish bounds.
const (
	// DefaultPublishTimeout bounds how long the acknowledgements of one
	// write are awaited in the background; what is not acknowledged by
	// then is left to the relay.
	DefaultPublishTimeout = 5 * time.Second
	// maxOutstanding is how many messages may await their
	// acknowledgement before further writes leave theirs to the relay at
	// once: NATS that accepts but does not answer would otherwise fill
	// memory, and at the client's own cap a publish blocks.
	maxOutstanding = 2000
	// markBatch bounds the rows one mark round trip records.
	markBatch = 1024
)

// Publisher publishes what a committed write recorded, right after commit:
// each event on EVENTS and each delivery on DELIVERIES, with Nats-Msg-Id =
// event id / delivery id. A failure only logs: the rows stay unpublished
// and the Relay sends them later, and a message sent twice is dropped by
// JetStream's duplicate window.
//
// A write does not wait on NATS (docs/decisions/0022): AfterCommit hands
// the messages to the client and returns; their acknowledgements are
// awaited in the background, and the rows they cover are marked published
// by one marker that records, in one round trip, everything acknowledged
// while its previous round trip was out — so marking costs the request
// path nothing and batches itself under load. While the connection is down
// nothing is sent (the relay publishes once it is back).
type Publisher struct {
	// Base: the logger, and the wall clock that stamps published_at.
	service.Base
	db      *bun.DB
	js      jetstream.JetStream
	timeout time.Duration
	// left says writes are leaving their events to the relay (NATS
	// unreachable), so that is logged once per outage, not per write.
	left atomic.Bool

	// Failed, when set, is told each AfterCommit that left some of its
	// messages to the relay, and why (one of the Publish* reasons); set it
	// before the publisher is used.
	Failed func(reason string)

	// acked holds what JetStream acknowledged and is not yet marked;
	// marking says the marker goroutine runs.
	mu      sync.Mutex
	acked   []outMsg
	marking bool
	// busy counts the background work in progress (Wait).
	busy sync.WaitGroup
}

// Why an AfterCommit left messages to the relay (Publisher.Failed).
const (
	PublishDisconnected = "disconnected" // NATS out of reach: nothing was sent
	PublishBackpressure = "backpressure" // too many acknowledgements outstanding
	PublishError        = "error"        // a publish or the mark failed
)

// NewPublisher returns a publisher over db (the app pool) and js.
func NewPublisher(db *bun.DB, js jetstream.JetStream, log *slog.Logger) *Publisher {
	return &Publisher{Base: service.Base{Log: log}, db: db, js: js, timeout: DefaultPublishTimeout}
}

// AfterCommit publishes rs without waiting for JetStream; it implements
// AfterCommitter.
func (p *Publisher) AfterCommit(ctx context.Context, rs []Recorded) {
	if len(rs) == 0 {
		return
	}
	if p.disconnected() {
		p.failed(PublishDisconnected)
		p.leave(ctx, ErrDisconnected)
		return
	}
	if p.js.PublishAsyncPending() >= maxOutstanding {
		p.failed(PublishBackpressure)
		p.leave(ctx, errTooManyOutstanding)
		return
	}
	msgs, err := messages(rs)
	if err != nil {
		p.failed(PublishError)
		p.Logger().ErrorContext(ctx, "events: publish after commit", "error", err)
		return
	}
	b := startPublish(p.js, msgs)
	p.busy.Add(1)
	go func() {
		defer p.busy.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
		defer cancel()
		if !b.await(ctx) {
			b.errs = append(b.errs, fmt.Errorf("streams: publish: %w", ctx.Err()))
		}
		p.settle(ctx, b)
	}()
}

// Wait returns once every publish handed to AfterCommit so far is settled
// and marked (or left to the relay): shutdown calls it before closing the
// pool, and tests before reading the rows.
func (p *Publisher) Wait() { p.busy.Wait() }

// settle queues what was acknowledged for marking and logs what was not.
func (p *Publisher) settle(ctx context.Context, b *inflight) {
	p.queueMark(b.acked)
	err := errors.Join(b.errs...)
	if err != nil {
		p.failed(PublishError)
	}
	switch {
	case err != nil && len(b.acked) == 0:
		p.leave(ctx, err)
	case err != nil:
		p.Logger().WarnContext(ctx, "events: publish after commit failed in part; the relay will retry", "error", err)
	case p.left.CompareAndSwap(true, false):
		p.Logger().InfoContext(ctx, "events: published after commit again")
	}
}

// queueMark adds ms to what the marker records next, starting it when it
// is idle.
func (p *Publisher) queueMark(ms []outMsg) {
	if len(ms) == 0 {
		return
	}
	p.mu.Lock()
	p.acked = append(p.acked, ms...)
	start := !p.marking
	p.marking = true
	p.mu.Unlock()
	if start {
		p.busy.Add(1)
		go p.markLoop()
	}
}

// markLoop marks what is queued, one round trip at a time, until nothing
// is left: what arrives during a round trip goes in the next one.
func (p *Publisher) markLoop() {
	defer p.busy.Done()
	for {
		p.mu.Lock()
		n := min(len(p.acked), markBatch)
		if n == 0 {
			p.acked, p.marking = nil, false
			p.mu.Unlock()
			return
		}
		batch := p.acked[:n:n]
		p.acked = p.acked[n:]
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
		if err := p.mark(ctx, batch); err != nil {
			// The rows stay unpublished: the relay sends them again and
			// JetStream drops the duplicates.
			p.failed(PublishError)
			p.Logger().WarnContext(ctx, "events: mark published", "error", err)
		}
		cancel()
	}
}

// leave notes that a write's events are left to the relay, once per
// outage in the log.
func (p *Publisher) leave(ctx context.Context, err error) {
	if !p.left.Swap(true) {
		p.Logger().WarnContext(ctx, "events: not published after commit; the relay publishes them once NATS answers", "error", err)
	}
}

func (p *Publisher) failed(reason string) {
	if p.Failed != nil {
		p.Failed(reason)
	}
}

func (p *Publisher) disconnected() bool {
	nc := p.js.Conn()
	return nc != nil && !nc.IsConnected()
}

// ErrDisconnected is returned by Publish while NATS is unreachable: the
// write's answer is not held up waiting for it; the relay publishes later.
var ErrDisconnected = errors.New("streams: NATS disconnected")

var errTooManyOutstanding = errors.New("streams: too many publishes awaiting their acknowledgement")

// Publish sends rs and marks what JetStream acknowledged as published.
func (p *Publisher) Publish(ctx context.Context, rs []Recorded) error {
	if p.disconnected() {
		return ErrDisconnected
	}
	msgs, err := messages(rs)
	if err != nil {
		return err
	}
	acked, pubErr := publishAll(ctx, p.js, msgs)
	return errors.Join(p.mark(ctx, acked), pubErr)
}

// mark records acked as published: each company's rows in its own scope,
// all in one message (one round trip, one implicit transaction). Companies
// and keys go in sorted order, so markers of several processes lock rows in
// the same order. A dispatcher recording the same deliveries may still
// deadlock with the whole batch (found by make bench); PostgreSQL then
// ends one of the two, and the batch is marked again company by company,
// each a short transaction of its own.
func (p *Publisher) mark(ctx context.Context, acked []outMsg) error {
	byCompany := map[string][]outMsg{}
	for _, m := range acked {
		byCompany[m.company] = append(byCompany[m.company], m)
	}
	companies := slices.Sorted(maps.Keys(byCompany))
	entries := make([]tenant.Scoped, 0, len(companies))
	for _, co := range companies {
		q, args := markStatements(byCompany[co], p.WallNow())
		entries = append(entries, tenant.Scoped{CompanyID: co, Statements: q, Args: args})
	}
	err := tenant.ExecAll(ctx, p.db, entries)
	if err != nil && db.IsConflict(err) && len(entries) > 1 {
		var errs []error
		for _, e := range entries {
			if err := tenant.ExecAll(ctx, p.db, []tenant.Scoped{e}); err != nil {
				errs = append(errs, err)
			}
		}
		err = errors.Join(errs...)
	}
	if err != nil {
		return fmt.Errorf("streams: mark published: %w", err)
	}
	return nil
}

// inflight is a set of messages published asynchronously, awaited in one
// or more steps.
type inflight struct {
	msgs    []outMsg
	futures []jetstream.PubAckFuture
	next    int // futures before next are settled
	acked   []outMsg
	errs    []error
}

// startPublish publishes msgs asynchronously. A client with too many
// acknowledgements outstanding refuses at once instead of stalling.
func startPublish(js jetstream.JetStream, msgs []outMsg) *inflight {
	b := &inflight{msgs: msgs, futures: make([]jetstream.PubAckFuture, len(msgs)), acked: make([]outMsg, 0, len(msgs))}
	for i, m := range msgs {
		f, err := js.PublishMsgAsync(m.msg, jetstream.WithStallWait(time.Millisecond))
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("streams: publish %s: %w", m.msg.Subject, err))
			continue
		}
		b.futures[i] = f
	}
	return b
}

// await waits until every message is acknowledged or refused, or ctx
// ends; it says whether every one is settled.
func (b *inflight) await(ctx context.Context) bool {
	for ; b.next < len(b.futures); b.next++ {
		f := b.futures[b.next]
		if f == nil {
			continue
		}
		select {
		case <-f.Ok():
			b.acked = append(b.acked, b.msgs[b.next])
		case err := <-f.Err():
			b.errs = append(b.errs, fmt.Errorf("streams: publish %s: %w", b.msgs[b.next].msg.Subject, err))
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// publishAll publishes msgs asynchronously and waits for every ack; it
// returns the acknowledged ones (a duplicate counts: JetStream has it).
func publishAll(ctx context.Context, js jetstream.JetStream, msgs []outMsg) ([]outMsg, error) {
	b := startPublish(js, msgs)
	if !b.await(ctx) {
		b.errs = append(b.errs, fmt.Errorf("streams: publish: %w", ctx.Err()))
	}
	return b.acked, errors.Join(b.errs...)
}

// markPublished records, in tx, that ms are in JetStream (one round trip).
func markPublished(ctx context.Context, tx bun.IDB, ms []outMsg, now time.Time) error {
	q, args := markStatements(ms, now)
	if q == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("streams: mark published: %w", err)
	}
	return nil
}

// markStatements are the statements that record ms as in JetStream, for one
// message; "" when there is nothing to mark. An event nobody subscribed to
// has nothing more to do in Postgres (the firehose has it), so its row is
// deleted; the others keep it for manual resends until the retention sweep.
// Events and deliveries are marked by one statement
// (sql/oficina_mark_published.sql, each row by its key).
//
// A mark lost in a crash only makes the relay publish again, which
// JetStream's duplicate window drops: no need to wait for the WAL flush,
// which would otherwise double the commits each write waits for.
func markStatements(ms []outMsg, now time.Time) (string, []any) {
	if len(ms) == 0 {
		return "", nil
	}
	events, deliveries := []string{}, []string{}
	for _, m := range ms {
		if m.eventID != "" {
			events = append(events, m.eventID)
		} else {
			deliveries = append(deliveries, m.deliveryID)
		}
	}
	slices.Sort(events)
	slices.Sort(deliveries)
	return "SET LOCAL synchronous_commit = off;\nSELECT oficina_mark_published(?, ?, ?)",
		[]any{pgdialect.Array(events), pgdialect.Array(deliveries), now}
}
