package tasks

import (
	"oficina/schema/apitime"
	"oficina/schema/ids"
	"oficina/tenant"
)

// example is a task as its events show it in the OpenAPI document's
// webhook examples: the contact task of a lead capture.
func example() Task {
	return Task{Object: "task", ID: ids.Example("tsk", 1), Title: "Call back Maria Souza",
		Description: new("Asked for a quote to install an air conditioner (website form)."),
		Status:      StatusPending, Priority: PriorityMedium, DueDate: new(apitime.TimeOf(2026, 3, 15, 13, 5, 9)),
		IsOverdue: false, AssigneeID: new(ids.Example("mem", 2)), AssigneeType: new(tenant.TeamMemberType(tenant.TypeSeller)),
		ClientID: new(ids.Example("cli", 1)), CreatedAt: apitime.TimeOf(2026, 3, 14, 13, 5, 9),
		UpdatedAt: apitime.TimeOf(2026, 3, 14, 13, 5, 9)}
}
