package quotes

import "oficina/streams"

// Event types of quotes; data.object is the quote as its GET returns it
// (Quote). Every write that changes a quote's representation records
// quote.updated; one that changes its status also records
// quote.status_changed first (as service orders do, decision 0006).
const (
	EventCreated       = "quote.created"
	EventUpdated       = "quote.updated"
	EventStatusChanged = "quote.status_changed"
	EventDeleted       = "quote.deleted"
)

// EventTypes describes the quote events for the catalogue.
func EventTypes() []streams.EventType {
	return []streams.EventType{
		{Name: EventCreated, Kind: "quote", Object: example(),
			Summary: "A quote was created in the dashboard."},
		{Name: EventUpdated, Kind: "quote", Object: example(), ChangedFields: []string{"approved_at", "status"},
			Summary: "A quote's representation changed (its content, or its status with quote.status_changed); changed_fields names the fields."},
		{Name: EventStatusChanged, Kind: "quote", Object: example(),
			Summary: "A quote's status changed: approved, rejected, canceled… in the dashboard, or expired past valid_until, sent once when the quote list is next opened."},
		{Name: EventDeleted, Kind: "quote", Object: example(),
			Summary: "A quote was deleted in the dashboard; the object is the quote as it was. Orders and sales made from it keep their content and lose quote_id."},
	}
}
