package orders

import (
	"oficina/schema/apitime"
	"oficina/schema/ids"
)

// example is a service order as its events show it in the OpenAPI
// document's webhook examples.
func example() ServiceOrder {
	return ServiceOrder{Object: "service_order", ID: ids.Example(IDPrefix, 1), Number: 2087, Status: StatusScheduled,
		ClientID: new(ids.Example("cli", 1)), ClientName: "Maria Souza", ClientPhone: "+55 11 98765-4321",
		ClientDescription: "The air conditioner in the bedroom does not cool.",
		ServiceAddress:    "Rua das Flores, 120, ap. 42 - Pinheiros, São Paulo - SP, 05415-000",
		TypeID:            new(ids.Example("sot", 1)), TechnicianID: new(ids.Example("mem", 3)), SupportTechnicianIDs: []string{},
		ScheduledStart: new(apitime.TimeOf(2026, 3, 16, 12, 0, 0)), ScheduledEnd: new(apitime.TimeOf(2026, 3, 16, 14, 0, 0)),
		Priority: "high", InternalNotes: "Bring the long ladder.",
		Items:         []ServiceOrderItem{{Description: "Technical visit", Quantity: 1, UnitPriceCents: 15000, TotalCents: 15000}},
		SubtotalCents: 15000, TotalCents: 15000,
		Checklist: []ServiceOrderChecklistItem{{ID: ids.Example("chi", 1), ChecklistID: ids.Example("chk", 1),
			Description: "Check the gas pressure", Required: true}},
		TechnicianCompletions: []TechnicianCompletion{},
		CreatedAt:             apitime.TimeOf(2026, 3, 14, 13, 5, 9), UpdatedAt: apitime.TimeOf(2026, 3, 14, 13, 5, 9)}
}
