package webhooks

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/ids"
	"oficina/schema/page"
	"oficina/streams"
	"oficina/streams/envelope"
)

// DeliveryFilter narrows the delivery log; zero members do not filter.
type DeliveryFilter struct {
	Status    string // pending, succeeded or failed
	EventType string
	EventID   string
	// CreatedAfter and CreatedBefore bound when the delivery was created
	// (after: inclusive, before: exclusive).
	CreatedAfter, CreatedBefore *time.Time
}

// FilterEventIDPattern is the event_id filter ParseDeliveryFilter takes,
// as the OpenAPI document states it: an event id, or empty, which is no
// filter (as a form sends it), like every filter of the delivery log.
const FilterEventIDPattern = `^(?:evt_[0-9a-f]{32})?$`

// ParseDeliveryFilter reads status, event_type, event_id, created_after and
// created_before from q; a bad value is 400 invalid_request, as every
// query parameter.
func ParseDeliveryFilter(q url.Values) (DeliveryFilter, error) {
	var f DeliveryFilter
	bad := apierr.New(apierr.InvalidRequest)
	one := func(name string) (string, bool) {
		vs, ok := q[name]
		if !ok || len(vs) == 1 && vs[0] == "" {
			return "", true
		}
		return vs[0], len(vs) == 1
	}
	var ok bool
	if f.Status, ok = one("status"); !ok || f.Status != "" && !slices.Contains(WebhookDeliveryStatus("").Values(), f.Status) {
		return f, bad
	}
	// The document lists the event types: another matches no delivery and
	// is refused, as GET /events refuses one.
	if f.EventType, ok = one("event_type"); !ok || f.EventType != "" && !slices.Contains(EventType("").Values(), f.EventType) {
		return f, bad
	}
	if f.EventID, ok = one("event_id"); !ok || f.EventID != "" && !envelope.ValidEventID(f.EventID) {
		return f, bad
	}
	for name, dst := range map[string]**time.Time{"created_after": &f.CreatedAfter, "created_before": &f.CreatedBefore} {
		v, ok := one(name)
		if !ok {
			return f, bad
		}
		if v == "" {
			continue
		}
		t, err := apitime.ParseTimestamp(v)
		if err != nil {
			return f, bad
		}
		*dst = &t.Time
	}
	return f, nil
}

func (f DeliveryFilter) apply(q *bun.SelectQuery) *bun.SelectQuery {
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.EventType != "" {
		q = q.Where("event_type = ?", f.EventType)
	}
	if f.EventID != "" {
		q = q.Where("event_id = ?", f.EventID)
	}
	if f.CreatedAfter != nil {
		q = q.Where("created_at >= ?", *f.CreatedAfter)
	}
	if f.CreatedBefore != nil {
		q = q.Where("created_at < ?", *f.CreatedBefore)
	}
	return q
}

// DeliveryLog pages through an endpoint's delivery log as filtered, newest
// first (the cursor is the last delivery id of the previous page).
func DeliveryLog(ctx context.Context, tx bun.IDB, endpointID string, f DeliveryFilter, p page.Params) (page.List[WebhookDelivery], error) {
	l, err := DeliveryLogRows(ctx, tx, endpointID, f, p)
	if err != nil {
		return page.List[WebhookDelivery]{}, err
	}
	vs := make([]WebhookDelivery, len(l.Data))
	for i := range l.Data {
		vs[i] = ViewDelivery(&l.Data[i])
	}
	return page.List[WebhookDelivery]{Object: l.Object, Data: vs, HasMore: l.HasMore}, nil
}

// DeliveryLogRows is DeliveryLog's page as stored, with what the API's
// view leaves out: the portal shows a 2xx answer's status too.
func DeliveryLogRows(ctx context.Context, tx bun.IDB, endpointID string, f DeliveryFilter, p page.Params) (page.List[streams.Delivery], error) {
	if _, err := Get(ctx, tx, endpointID); err != nil {
		return page.List[streams.Delivery]{}, err
	}
	var ds []streams.Delivery
	q := f.apply(tx.NewSelect().Model(&ds).Where("endpoint_id = ?", endpointID))
	if err := p.Apply(q, "id").Scan(ctx); err != nil {
		return page.List[streams.Delivery]{}, fmt.Errorf("webhooks: delivery log: %w", err)
	}
	return page.Wrap(p, ds), nil
}

// GetDelivery reads one delivery of an endpoint (404 otherwise).
func GetDelivery(ctx context.Context, tx bun.IDB, endpointID, deliveryID string) (*streams.Delivery, error) {
	if !ids.Valid(IDPrefix, endpointID) || !ids.Valid(streams.DeliveryIDPrefix, deliveryID) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	d := new(streams.Delivery)
	if err := tx.NewSelect().Model(d).Where("id = ?", deliveryID).Where("endpoint_id = ?", endpointID).Scan(ctx); err != nil {
		return nil, apierr.NoRows(err)
	}
	return d, nil
}

// AttemptRow is one attempt of a delivery as the log shows it: its row
// (streams.Attempt, the table's one model) and the body it sent, which is
// the delivery's event body, stored once with the event and read by
// Attempts.
type AttemptRow struct {
	streams.Attempt `bun:",extend"`

	RequestBody *string `bun:"-"` // the event's body, whole
}

// FormattedRequestBody is the request body indented for reading, when it
// is whole JSON ("" otherwise). Only whitespace is added: keys keep their
// order and numbers their spelling. It is not what was signed — the body as
// sent (RequestBody) is.
func (a *AttemptRow) FormattedRequestBody() string {
	if a.RequestBody == nil {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(*a.RequestBody), "", "  ") != nil {
		return ""
	}
	return b.String()
}

// Attempts lists a delivery's attempts, oldest first, each with the body
// sent and the request headers every attempt sent alike, both read from
// its event (withRepeatedHeaders): the body is none once the event's day
// is past retention, and Content-Length then too.
func Attempts(ctx context.Context, tx bun.IDB, deliveryID string) ([]AttemptRow, error) {
	var as []AttemptRow
	if err := tx.NewSelect().Model(&as).Where("delivery_id = ?", deliveryID).Order("started_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("webhooks: attempts of %s: %w", deliveryID, err)
	}
	if len(as) == 0 {
		return as, nil
	}
	var ev struct {
		ID   string `bun:"event_id"`
		Body []byte `bun:"body"`
	}
	// An event is recorded with or before its deliveries: the bound keeps
	// the lookup to the days up to the delivery's.
	err := tx.NewRaw(`SELECT d.event_id, e.body FROM webhook_deliveries d
		LEFT JOIN event_outbox e ON e.id = d.event_id AND e.created_at <= d.created_at WHERE d.id = ?`, deliveryID).Scan(ctx, &ev)
	if errors.Is(err, sql.ErrNoRows) {
		return as, nil
	}
	if err != nil {
		return nil, fmt.Errorf("webhooks: event of %s: %w", deliveryID, err)
	}
	size := -1
	var body *string
	if ev.Body != nil {
		s := string(ev.Body)
		size, body = len(ev.Body), &s
	}
	for i := range as {
		as[i].RequestBody = body
		as[i].RequestHeaders = withRepeatedHeaders(as[i].RequestHeaders, ev.ID, size)
	}
	return as, nil
}
