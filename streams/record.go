package streams

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/streams/envelope"
)

// ActorKind says who made a write; some kinds always yield summarized
// events (spec 6.3 rule 5).
type ActorKind string

// Actor kinds.
const (
	ActorAPI        ActorKind = "api"
	ActorDashboard  ActorKind = "dashboard"
	ActorAutomation ActorKind = "automation"
	ActorAssistant  ActorKind = "assistant"
	ActorBankImport ActorKind = "bank_import"
	ActorRoutine    ActorKind = "routine"
	// ActorSystem is Oficina reporting on its own webhooks: the
	// operational events (an endpoint disabled, failing, recovered, a
	// delivery given up), whose object is what they report, so they are
	// never summarized.
	ActorSystem ActorKind = "system"
)

// Actor is who made a write.
type Actor struct {
	Kind     ActorKind
	MemberID string
	KeyID    string
}

// AlwaysSummarized reports the writers whose events carry only object and id.
func (a Actor) AlwaysSummarized() bool {
	switch a.Kind {
	case ActorAutomation, ActorAssistant, ActorBankImport, ActorRoutine:
		return true
	}
	return false
}

// Change is one event of a write.
type Change struct {
	// Type is the event name, e.g. "service_order.updated".
	Type string
	// Object is the resource exactly as its GET returns it at this moment
	// (it marshals to a JSON object with "object" and "id").
	Object any
	// Before is, for ".updated" events, the GET representation before the
	// write; changed_fields is computed from it and a write that changed
	// nothing yields no ".updated".
	Before any
	// ChangedFields, when set, is used instead of diffing Before and Object
	// (e.g. status_changed + updated from one write share one list).
	ChangedFields []string
	// About is, for an operational event (the webhook families), the
	// endpoint it is about. Such an event is never delivered to that
	// endpoint — a failing endpoint would not hear it, and an endpoint
	// does not need telling what it just did — and "*" does not subscribe
	// to it: only its name or its family wildcard do (decision 0037).
	About string
}

// Recorded is an event stored by Record (or a ping or resend), with the
// deliveries created for it; the publisher sends both after commit.
type Recorded struct {
	ID         string
	CompanyID  string
	Type       string
	Body       []byte
	Deliveries []RecordedDelivery
	// DeliveriesOnly marks pings and resends: the event is not published
	// on EVENTS (a ping is not a fact; a resent event was published when
	// it was recorded), only its deliveries.
	DeliveriesOnly bool
	// at is the rows' created_at: the write's wall clock.
	at time.Time
	// about is the Change's About.
	about string
}

// RecordedDelivery is a delivery row created with an event.
type RecordedDelivery struct {
	ID         string
	EndpointID string
	// Its place in its object's order, to an endpoint that orders by
	// object ("" and 0 otherwise).
	OrderKey string
	OrderSeq int64
}

// OutboxEvent is a row of event_outbox.
type OutboxEvent struct {
	bun.BaseModel `bun:"table:event_outbox"`

	ID            string    `bun:"id,pk"`
	CompanyID     string    `bun:"company_id"`
	Type          string    `bun:"type"`
	Body          []byte    `bun:"body"`
	OccurredAt    time.Time `bun:"occurred_at"`
	HasDeliveries bool      `bun:"has_deliveries"`
	CreatedAt     time.Time `bun:"created_at"`
}

// Record stores the events of one write in tx (the write's own company
// transaction) and, for each, one delivery per enabled endpoint of the
// company subscribed to its type at this moment (spec 6.1). ".updated"
// changes that change nothing are skipped.
func Record(ctx context.Context, w *Write, changes ...Change) ([]Recorded, error) {
	out := make([]Recorded, 0, len(changes))
	for _, c := range changes {
		r, skip, err := build(w, c)
		if err != nil {
			return nil, err
		}
		if !skip {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if err := insert(ctx, w, out); err != nil {
		return nil, err
	}
	if err := w.add(ctx, out...); err != nil {
		return nil, err
	}
	return out, nil
}

// build makes the envelope of one change; skip reports an update that
// changed nothing (spec 6.3 rule 3).
func build(w *Write, c Change) (r Recorded, skip bool, err error) {
	if c.Type == PingType {
		return r, false, fmt.Errorf("streams: %s is sent with Ping, not recorded", PingType)
	}
	obj, err := json.Marshal(c.Object)
	if err != nil {
		return r, false, fmt.Errorf("streams: %s: marshal object: %w", c.Type, err)
	}
	fields := c.ChangedFields
	if envelope.IsUpdate(c.Type) && fields == nil {
		before, err := json.Marshal(c.Before)
		if err != nil {
			return r, false, fmt.Errorf("streams: %s: marshal before: %w", c.Type, err)
		}
		if fields, err = envelope.ChangedFields(before, obj); err != nil {
			return r, false, fmt.Errorf("streams: %s: %w", c.Type, err)
		}
	}
	if envelope.IsUpdate(c.Type) && len(fields) == 0 {
		return r, true, nil
	}
	summarized := w.Actor.AlwaysSummarized()
	if summarized {
		fields = []string{}
	}
	ev, body, err := envelope.Build(envelope.Params{
		Type: c.Type, OrganizationID: w.CompanyID, OccurredAt: w.At,
		Object: obj, ChangedFields: fields, Summarize: summarized,
	})
	if err != nil {
		return r, false, fmt.Errorf("streams: %s: %w", c.Type, err)
	}
	return Recorded{ID: ev.ID, CompanyID: w.CompanyID, Type: c.Type, Body: body, about: c.About}, false, nil
}

// insertEvents stores the events and, in the same statement, finds the
// company's enabled endpoints subscribed to each type ("*", the type, or its
// family wildcard: the same rule as Matches; an operational event not
// through "*" and never to the endpoint it is about) and creates their
// deliveries (sql/oficina_record_events.sql: a function, so its plan is
// kept). Endpoints added or enabled later get nothing. Delivery ids come
// from a pool made in Go, assigned in endpoint order; a match beyond the
// pool comes back without an id and is inserted by a second statement,
// which a company with no more endpoints than the pool never needs.
const insertEvents = `SELECT event_id, endpoint_id, delivery_id, order_key, order_seq FROM oficina_record_events(?, ?, ?, ?, ?, ?, ?, ?)`

// deliveryPool is how many delivery ids insert makes per event ahead of
// the statement: enough for the endpoints most companies have.
const deliveryPool = 4

// insert stores the events and their deliveries: one statement, unless a
// company has more subscribed endpoints than the pool of ids.
func insert(ctx context.Context, w *Write, rs []Recorded) error {
	now := w.wall()
	evIDs, types, bodies := make([]string, len(rs)), make([]string, len(rs)), make([]string, len(rs))
	var about []*string // nil (NULL) unless an operational event is among rs
	byID := make(map[string]*Recorded, len(rs))
	for i := range rs {
		rs[i].at = now
		evIDs[i], types[i], bodies[i] = rs[i].ID, rs[i].Type, string(rs[i].Body)
		byID[rs[i].ID] = &rs[i]
		if rs[i].about != "" {
			if about == nil {
				about = make([]*string, len(rs))
			}
			about[i] = &rs[i].about
		}
	}
	pool := make([]string, deliveryPool*len(rs))
	for i := range pool {
		pool[i] = NewDeliveryID(now)
	}
	var matches []struct {
		EventID    string  `bun:"event_id"`
		EndpointID string  `bun:"endpoint_id"`
		DeliveryID *string `bun:"delivery_id"`
		OrderKey   *string `bun:"order_key"`
		OrderSeq   *int64  `bun:"order_seq"`
	}
	err := w.Tx.NewRaw(insertEvents, w.CompanyID, pgdialect.Array(evIDs), pgdialect.Array(types), pgdialect.Array(bodies),
		pgdialect.Array(pool), w.At.UTC(), now, pgdialect.Array(about)).Scan(ctx, &matches)
	if err != nil {
		return fmt.Errorf("streams: record events: %w", err)
	}
	var rest []Delivery
	for _, m := range matches {
		r := byID[m.EventID]
		d := RecordedDelivery{EndpointID: m.EndpointID}
		if m.OrderKey != nil && m.OrderSeq != nil {
			d.OrderKey, d.OrderSeq = *m.OrderKey, *m.OrderSeq
		}
		if m.DeliveryID != nil {
			d.ID = *m.DeliveryID
		} else {
			d.ID = NewDeliveryID(now)
			row := newDelivery(d, *r, KindEvent, now)
			row.OrderKey, row.OrderSeq = m.OrderKey, m.OrderSeq
			rest = append(rest, row)
		}
		r.Deliveries = append(r.Deliveries, d)
	}
	if len(rest) == 0 {
		return nil
	}
	if _, err := w.Tx.NewInsert().Model(&rest).Exec(ctx); err != nil {
		return fmt.Errorf("streams: record deliveries: %w", err)
	}
	return nil
}

// Snapshot is a resource's GET representation taken before a write changes
// it. It is marshalled at once: the write may change slices that the
// representation shares with its row, and a snapshot taken lazily would
// see those changes and miss them.
type Snapshot struct{ doc json.RawMessage }

// Snap takes the snapshot of view, a GET representation.
func Snap(view any) (Snapshot, error) {
	b, err := json.Marshal(view)
	if err != nil {
		return Snapshot{}, fmt.Errorf("streams: marshal before: %w", err)
	}
	return Snapshot{doc: b}, nil
}

// Changed lists the top-level fields in which after differs from the
// snapshot, alphabetically and without updated_at (spec 6.3 rule 1): the
// changed_fields of the write's ".updated" event. None means the write
// changes nothing, and then it saves and records nothing (rule 3): every
// update asks this before it writes.
func (s Snapshot) Changed(after any) ([]string, error) {
	a, err := json.Marshal(after)
	if err != nil {
		return nil, fmt.Errorf("streams: marshal after: %w", err)
	}
	fields, err := envelope.ChangedFields(s.doc, a)
	if err != nil {
		return nil, fmt.Errorf("streams: %w", err)
	}
	return fields, nil
}

// MarshalJSON is the representation as taken, so a Snapshot may be a
// Change's Before.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	if s.doc == nil {
		return []byte("null"), nil
	}
	return s.doc, nil
}
