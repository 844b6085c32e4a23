package orders

import (
	"context"

	"oficina/streams"
)

// Event types of service orders; data.object is the order as GET
// /service_orders/{id} returns it (ServiceOrder). The spec's catalogue (6.4) lists
// updated and status_changed; created follows client.created and
// sale.created (docs/decisions/0006-service-order-events.md).
const (
	EventCreated       = "service_order.created"
	EventUpdated       = "service_order.updated"
	EventStatusChanged = "service_order.status_changed"
	EventDeleted       = "service_order.deleted"
)

// EventTypes describes the service order events for the catalogue.
func EventTypes() []streams.EventType {
	return []streams.EventType{
		{Name: EventCreated, Kind: "service_order", Object: example(),
			Summary: "A service order was created: through the API, in the dashboard, or by converting a quote."},
		{Name: EventUpdated, Kind: "service_order", Object: example(), ChangedFields: []string{"scheduled_end", "scheduled_start", "status"},
			Summary: "An order's representation changed (edit, status, start, completion, cancellation, checklist, technicians' marks); changed_fields names the fields."},
		{Name: EventStatusChanged, Kind: "service_order", Object: example(),
			Summary: "An order's status changed; sent before the same write's service_order.updated, whose changed_fields include status."},
		{Name: EventDeleted, Kind: "service_order", Object: example(),
			Summary: "An order was deleted in the dashboard; the object is the order as it was. Its appointment, revenue entry and quote stay, unlinked, without events of their own."},
	}
}

// mutate is every write to an existing order: it locks the row, lets fn
// change it, and — when the GET representation changed — saves it with a
// new updated_at and records the events: service_order.updated with the
// changed fields, plus service_order.status_changed when the status moved
// (6.3 rule 2). A write that changes nothing saves and records nothing.
func mutate(ctx context.Context, w *streams.Write, id string, fn func(o *Row) error) (*Row, error) {
	o, err := get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	before, err := streams.Snap(o.View())
	if err != nil {
		return nil, err
	}
	status := o.Status
	if err := fn(o); err != nil {
		return nil, err
	}
	fields, err := before.Changed(o.View())
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return o, nil // nothing changed: no write, no event
	}
	o.UpdatedAt = w.At
	if err := save(ctx, w.Tx, o); err != nil {
		return nil, err
	}
	after := o.View()
	var changes []streams.Change
	if o.Status != status {
		changes = append(changes, streams.Change{Type: EventStatusChanged, Object: after})
	}
	changes = append(changes, streams.Change{Type: EventUpdated, Object: after, ChangedFields: fields})
	if _, err := streams.Record(ctx, w, changes...); err != nil {
		return nil, err
	}
	return o, nil
}
