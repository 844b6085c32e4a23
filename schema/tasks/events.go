package tasks

import "oficina/streams"

// Event types of tasks; data.object is the task as its GET returns it
// (Task). A task's is_overdue changing with time sends nothing (spec 6.3
// rule 7).
const (
	EventCreated = "task.created"
	EventUpdated = "task.updated"
	EventDeleted = "task.deleted"
)

// EventTypes describes the task events for the catalogue.
func EventTypes() []streams.EventType {
	return []streams.EventType{
		{Name: EventCreated, Kind: "task", Object: example(),
			Summary: "A task was opened: the contact task of a lead capture."},
		{Name: EventUpdated, Kind: "task", Object: example(), ChangedFields: []string{"assignee_id", "due_date"},
			Summary: "A task changed (title, status, due date, assignee, …); changed_fields names the fields."},
		{Name: EventDeleted, Kind: "task", Object: example(),
			Summary: "A task was deleted in the dashboard; the object is the task as it was."},
	}
}
