package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/streams"
	"oficina/streams/envelope"
)

// LoggedDelivery is a delivery a test wrote into the delivery log.
type LoggedDelivery struct {
	EventID, DeliveryID string
	Body                []byte
}

// LogDelivery records an event of eventType with one delivery to
// endpointID in status (pending, succeeded or failed), both created at at
// and marked published: a delivery log entry as the dispatcher would have
// left it, for tests of what reads the log (recovery, the portal).
func (c *Company) LogDelivery(t testing.TB, endpointID, eventType, status string, at time.Time) LoggedDelivery {
	t.Helper()
	obj, _ := json.Marshal(map[string]string{"object": "client", "id": "cli_logged"})
	ev, body, err := envelope.Build(envelope.Params{Type: eventType, OrganizationID: c.Company.ID, OccurredAt: at, Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	out := LoggedDelivery{EventID: ev.ID, DeliveryID: streams.NewDeliveryID(at), Body: body}
	c.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		row := &streams.OutboxEvent{ID: ev.ID, CompanyID: c.Company.ID, Type: eventType, Body: body, OccurredAt: at,
			HasDeliveries: true, CreatedAt: at}
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return err
		}
		kind := streams.KindEvent
		if eventType == streams.PingType {
			kind = streams.KindPing
		}
		return c.insertDelivery(ctx, tx, out.DeliveryID, endpointID, ev.ID, eventType, kind, status, at)
	})
	return out
}

// LogResend adds to the log a delivery of an already logged event (a
// manual resend) in status, created at at.
func (c *Company) LogResend(t testing.TB, endpointID string, of LoggedDelivery, eventType, status string, at time.Time) string {
	t.Helper()
	id := streams.NewDeliveryID(at)
	c.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return c.insertDelivery(ctx, tx, id, endpointID, of.EventID, eventType, streams.KindResend, status, at)
	})
	return id
}

func (c *Company) insertDelivery(ctx context.Context, tx bun.Tx, id, endpointID, eventID, eventType, kind, status string, at time.Time) error {
	d := &streams.Delivery{ID: id, CompanyID: c.Company.ID, EndpointID: endpointID, EventID: eventID, EventType: eventType,
		Kind: kind, Status: status, CreatedAt: at, UpdatedAt: at}
	if status != streams.StatusPending {
		d.AttemptCount, d.LastAttemptAt, d.CompletedAt = 1, &at, &at
	}
	_, err := tx.NewInsert().Model(d).Exec(ctx)
	return err
}

// Backlog returns the ids of the company's events and deliveries whose
// publish is not known to have succeeded (publish_backlog, decision 0029),
// in id order.
func (c *Company) Backlog(t testing.TB) []string {
	t.Helper()
	var ids []string
	c.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model((*streams.BacklogEntry)(nil)).Column("id").Order("id").Scan(ctx, &ids)
	})
	return ids
}

// AgeBacklog makes the company's backlog, and the log rows it names, by
// older: as if a crash had left them there that long ago, past the
// relay's minimum age.
func (c *Company) AgeBacklog(t testing.TB, by time.Duration) {
	t.Helper()
	age := fmt.Sprintf("%d microseconds", by.Microseconds())
	_, err := OwnerDB(t).ExecContext(context.Background(), `
		WITH b AS (UPDATE publish_backlog SET created_at = created_at - ?0::interval WHERE company_id = ?1 RETURNING id),
		     e AS (UPDATE event_outbox SET created_at = created_at - ?0::interval WHERE company_id = ?1 AND id IN (SELECT id FROM b) RETURNING 1)
		UPDATE webhook_deliveries SET created_at = created_at - ?0::interval WHERE company_id = ?1 AND id IN (SELECT id FROM b)`,
		age, c.Company.ID)
	if err != nil {
		t.Fatalf("testkit: age backlog: %v", err)
	}
}

// Relay runs, until the test ends, a relay of the companies' backlog to js
// without its minimum age: what a write left there with no publisher
// vouching for it (a test's own write unit, the dispatcher's operational
// events) is published within a round or two.
func Relay(t testing.TB, js jetstream.JetStream, companies ...string) {
	t.Helper()
	r := &streams.Relay{DB: WorkerDB(t), JS: js, MinAge: -1, Interval: 20 * time.Millisecond, Only: companies}
	Background(t, "relay", r.Run)
}
