package streams

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/ids"
	"oficina/streams/envelope"
)

// Delivery kinds.
const (
	KindEvent  = "event"  // created by the write that recorded the event
	KindPing   = "ping"   // POST /webhook_endpoints/{id}/ping
	KindResend = "resend" // a manual resend of another delivery
)

// Delivery statuses (spec 2.8, 3.3).
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// DeliveryIDPrefix starts every delivery id.
const DeliveryIDPrefix = "dlv"

// NewDeliveryID returns a new delivery id made at at, the delivery's
// created_at (also its DELIVERIES Nats-Msg-Id). The id's time places the
// delivery and its attempts in the log's day partition (decision 0027), so
// it is the write's wall clock, not the process's.
func NewDeliveryID(at time.Time) string { return ids.NewAt(DeliveryIDPrefix, at) }

// Delivery is a row of webhook_deliveries: one event to one endpoint, with
// the outcome the dispatcher records. The delivery log reads it.
type Delivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries"`

	ID                 string     `bun:"id,pk"`
	CompanyID          string     `bun:"company_id"`
	EndpointID         string     `bun:"endpoint_id"`
	EventID            string     `bun:"event_id"`
	EventType          string     `bun:"event_type"`
	Kind               string     `bun:"kind"`
	ResendOf           *string    `bun:"resend_of"`
	Status             string     `bun:"status"`
	ResponseStatusCode *int       `bun:"response_status_code"`
	Error              *string    `bun:"error"`
	AttemptCount       int        `bun:"attempt_count"`
	LastAttemptAt      *time.Time `bun:"last_attempt_at"`
	NextAttemptAt      *time.Time `bun:"next_attempt_at"`
	CompletedAt        *time.Time `bun:"completed_at"`
	CreatedAt          time.Time  `bun:"created_at"`
	UpdatedAt          time.Time  `bun:"updated_at"`
	// OrderKey and OrderSeq place a delivery to an endpoint with ordering
	// "object" among the deliveries of its object to that endpoint
	// (oficina_record_events); nil for every other delivery.
	OrderKey *string `bun:"order_key"`
	OrderSeq *int64  `bun:"order_seq"`
}

// Attempt is a row of webhook_attempts, the one model of the table: one
// send of a delivery, written by the dispatcher, with what it sent and got
// but the body (the delivery's event body, kept once): the request headers
// as sent (the signature, never the secret), the answer's status, headers
// and body (capped), how long it took, what triggered it and the next
// attempt it scheduled. Attempts recorded before these details were kept
// have none.
type Attempt struct {
	bun.BaseModel `bun:"table:webhook_attempts"`

	ID                    string              `bun:"id,pk"`
	CompanyID             string              `bun:"company_id"`
	DeliveryID            string              `bun:"delivery_id,pk"`
	EndpointID            string              `bun:"endpoint_id"`
	StartedAt             time.Time           `bun:"started_at"`
	FinishedAt            *time.Time          `bun:"finished_at"`
	ResponseStatusCode    *int                `bun:"response_status_code"`
	Error                 *string             `bun:"error"`
	CreatedAt             time.Time           `bun:"created_at"`
	RequestHeaders        map[string][]string `bun:"request_headers,type:jsonb"`
	ResponseHeaders       map[string][]string `bun:"response_headers,type:jsonb"`
	ResponseBody          *string             `bun:"response_body"`
	ResponseBodyTruncated bool                `bun:"response_body_truncated"`
	DurationMS            *int                `bun:"duration_ms"`
	TriggeredBy           *string             `bun:"triggered_by"`
	NextAttemptAt         *time.Time          `bun:"next_attempt_at"`
}

// Succeeded reports a 2xx answer.
func (a *Attempt) Succeeded() bool {
	return a.ResponseStatusCode != nil && *a.ResponseStatusCode >= 200 && *a.ResponseStatusCode <= 299
}

func newDelivery(d RecordedDelivery, r Recorded, kind string, now time.Time) Delivery {
	return Delivery{ID: d.ID, CompanyID: r.CompanyID, EndpointID: d.EndpointID, EventID: r.ID,
		EventType: r.Type, Kind: kind, Status: StatusPending, CreatedAt: now, UpdatedAt: now}
}

// Ping records a real ping event and one delivery of it to endpointID
// only. The caller checks the endpoint exists and is enabled. The event is
// never published on EVENTS.
func Ping(ctx context.Context, w *Write, endpointID string) (Recorded, error) {
	obj, err := json.Marshal(PingObject{Object: PingType, WebhookEndpointID: endpointID})
	if err != nil {
		return Recorded{}, fmt.Errorf("streams: ping: %w", err)
	}
	ev, body, err := envelope.Build(envelope.Params{Type: PingType, OrganizationID: w.CompanyID, OccurredAt: w.At, Object: obj})
	if err != nil {
		return Recorded{}, fmt.Errorf("streams: ping: %w", err)
	}
	now := w.wall()
	// Deliveries only: a ping is never published on EVENTS.
	r := Recorded{ID: ev.ID, CompanyID: w.CompanyID, Type: PingType, Body: body, DeliveriesOnly: true,
		Deliveries: []RecordedDelivery{{ID: NewDeliveryID(now), EndpointID: endpointID}}, at: now}
	row := &OutboxEvent{ID: r.ID, CompanyID: r.CompanyID, Type: r.Type, Body: body, OccurredAt: w.At.UTC(),
		HasDeliveries: true, CreatedAt: now}
	if _, err := w.Tx.NewInsert().Model(row).Exec(ctx); err != nil {
		return Recorded{}, fmt.Errorf("streams: ping: %w", err)
	}
	d := newDelivery(r.Deliveries[0], r, KindPing, now)
	if _, err := w.Tx.NewInsert().Model(&d).Exec(ctx); err != nil {
		return Recorded{}, fmt.Errorf("streams: ping delivery: %w", err)
	}
	if err := w.add(ctx, r); err != nil {
		return Recorded{}, err
	}
	return r, nil
}

// Resend creates a new delivery of the same event (same event id, same
// body) to the same endpoint as orig: a manual resend. It is published on
// DELIVERIES only, after w commits. An event past retention (its day
// dropped while a later resend of it is still logged) is sql.ErrNoRows.
func Resend(ctx context.Context, w *Write, orig *Delivery) (*Delivery, error) {
	ev := new(OutboxEvent)
	// An event is recorded before or with its deliveries: the bound keeps
	// the lookup to the partitions up to orig's day.
	err := w.Tx.NewSelect().Model(ev).Where("id = ?", orig.EventID).Where("created_at <= ?", orig.CreatedAt).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("streams: resend %s: event %s: %w", orig.ID, orig.EventID, err)
	}
	now := w.wall()
	r := Recorded{ID: ev.ID, CompanyID: ev.CompanyID, Type: ev.Type, Body: ev.Body, DeliveriesOnly: true,
		Deliveries: []RecordedDelivery{{ID: NewDeliveryID(now), EndpointID: orig.EndpointID}}, at: now}
	d := newDelivery(r.Deliveries[0], r, KindResend, now)
	d.ResendOf = &orig.ID
	if _, err := w.Tx.NewInsert().Model(&d).Exec(ctx); err != nil {
		return nil, fmt.Errorf("streams: resend %s: %w", orig.ID, err)
	}
	if err := w.add(ctx, r); err != nil {
		return nil, err
	}
	return &d, nil
}
