package clients

import (
	"oficina/schema/apitime"
	"oficina/schema/ids"
)

// example is a client record as its events show it in the OpenAPI
// document's webhook examples.
func example() Client {
	return Client{Object: "client", ID: ids.Example("cli", 1), Name: "Maria Souza",
		Email: new("maria.souza@example.com"), Phone: new("+55 11 98765-4321"), Document: nil,
		Status: StatusActive, Source: new("website"), Notes: "Prefers visits in the morning.",
		BirthDate: new(apitime.DateOf(1986, 7, 21)), NextFollowUp: new(apitime.TimeOf(2026, 3, 20, 13, 0, 0)),
		LastInteractionAt: new(apitime.TimeOf(2026, 3, 14, 12, 40, 2)),
		CreatedAt:         apitime.TimeOf(2026, 2, 3, 18, 22, 41), UpdatedAt: apitime.TimeOf(2026, 3, 14, 13, 5, 9)}
}
