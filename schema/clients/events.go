package clients

import "oficina/streams"

// Event types of client records; data.object is the record as GET
// /clients/{id} returns it (View).
const (
	EventCreated = "client.created"
	EventUpdated = "client.updated"
	EventDeleted = "client.deleted"
)

// EventTypes describes the client events for the catalogue.
func EventTypes() []streams.EventType {
	return []streams.EventType{
		{Name: EventCreated, Kind: "client", Object: example(),
			Summary: "A client record was created: in the dashboard, or by lead capture when no record holds the contact."},
		{Name: EventUpdated, Kind: "client", Object: example(), ChangedFields: []string{"next_follow_up", "notes"},
			Summary: "A client record changed; changed_fields names the fields."},
		{Name: EventDeleted, Kind: "client", Object: example(),
			Summary: "A client record was deleted; the object is the record as it was. Its tasks, quotes, orders and sales stay, unlinked, without events of their own."},
	}
}
