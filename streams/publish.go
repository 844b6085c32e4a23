package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/tenant"
)

// DefaultPublishTimeout bounds one AfterCommit (publish and mark).
const DefaultPublishTimeout = 5 * time.Second

// Publisher publishes what a committed write recorded, right after commit:
// each event on EVENTS and each delivery on DELIVERIES, with Nats-Msg-Id =
// event id / delivery id, then marks the rows published. A failure only
// logs: the rows stay unpublished and the Relay sends them later, and a
// message sent twice is dropped by JetStream's duplicate window.
type Publisher struct {
	db      *bun.DB
	js      jetstream.JetStream
	log     *slog.Logger
	now     func() time.Time
	timeout time.Duration
}

// NewPublisher returns a publisher over db (the app pool) and js.
func NewPublisher(db *bun.DB, js jetstream.JetStream, log *slog.Logger) *Publisher {
	if log == nil {
		log = slog.Default()
	}
	return &Publisher{db: db, js: js, log: log, now: time.Now, timeout: DefaultPublishTimeout}
}

// AfterCommit publishes rs; it implements the API's publisher hook.
func (p *Publisher) AfterCommit(ctx context.Context, rs []Recorded) {
	if len(rs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := p.Publish(ctx, rs); err != nil {
		p.log.WarnContext(ctx, "events: publish after commit failed; the relay will retry", "error", err)
	}
}

// ErrDisconnected is returned by Publish while NATS is unreachable: the
// write's answer is not held up waiting for it; the relay publishes later.
var ErrDisconnected = errors.New("streams: NATS disconnected")

// Publish sends rs and marks what JetStream acknowledged as published.
func (p *Publisher) Publish(ctx context.Context, rs []Recorded) error {
	if nc := p.js.Conn(); nc != nil && !nc.IsConnected() {
		return ErrDisconnected
	}
	msgs, err := messages(rs)
	if err != nil {
		return err
	}
	acked, pubErr := publishAll(ctx, p.js, msgs)
	byCompany := map[string][]outMsg{}
	for _, m := range acked {
		byCompany[m.company] = append(byCompany[m.company], m)
	}
	var errs []error
	for co, ms := range byCompany {
		// The mark is its own short transaction, sent in one message.
		q, args := markStatements(ms, p.now())
		if err := tenant.Exec(ctx, p.db, co, q, args...); err != nil {
			errs = append(errs, fmt.Errorf("streams: mark published: %w", err))
		}
	}
	return errors.Join(append(errs, pubErr)...)
}

// publishAll publishes msgs asynchronously and waits for every ack; it
// returns the acknowledged ones (a duplicate counts: JetStream has it).
func publishAll(ctx context.Context, js jetstream.JetStream, msgs []outMsg) ([]outMsg, error) {
	futures := make([]jetstream.PubAckFuture, len(msgs))
	var errs []error
	for i, m := range msgs {
		f, err := js.PublishMsgAsync(m.msg)
		if err != nil {
			errs = append(errs, fmt.Errorf("streams: publish %s: %w", m.msg.Subject, err))
			continue
		}
		futures[i] = f
	}
	acked := make([]outMsg, 0, len(msgs))
	for i, f := range futures {
		if f == nil {
			continue
		}
		select {
		case <-f.Ok():
			acked = append(acked, msgs[i])
		case err := <-f.Err():
			errs = append(errs, fmt.Errorf("streams: publish %s: %w", msgs[i].msg.Subject, err))
		case <-ctx.Done():
			return acked, errors.Join(append(errs, fmt.Errorf("streams: publish: %w", ctx.Err()))...)
		}
	}
	return acked, errors.Join(errs...)
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
// Events and deliveries are marked by one statement (migration
// plan_cached_writes; by key since mark_published_by_key).
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
	return "SET LOCAL synchronous_commit = off;\nSELECT oficina_mark_published(?, ?, ?)",
		[]any{pgdialect.Array(events), pgdialect.Array(deliveries), now}
}
