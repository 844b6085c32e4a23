package quotes

import (
	"oficina/schema/apitime"
	"oficina/schema/ids"
)

// example is a quote as its events show it in the OpenAPI document's
// webhook examples.
func example() Quote {
	return Quote{Object: "quote", ID: ids.Example("quo", 1), Number: 318, ClientID: new(ids.Example("cli", 1)),
		ClientName: "Maria Souza", Status: StatusApproved,
		Items: []QuoteItem{
			{Description: "Air conditioner installation", Quantity: 1, UnitPriceCents: 45000, TotalCents: 45000},
			{Description: "Condenser wall bracket", Quantity: 1, UnitPriceCents: 12000, TotalCents: 12000,
				ProductID: new(ids.Example("prd", 1))},
		},
		SubtotalCents: 57000, DiscountCents: 2000, TotalCents: 55000,
		PaymentPlan: RawPaymentPlan(`{"mode":"entry_and_rest","entry_amount_cents":15000,` +
			`"installments":[{"amount_cents":40000,"due_date":"2026-04-14"}]}`),
		Notes: "Valid for 15 days.", ValidUntil: new(apitime.TimeOf(2026, 3, 29, 23, 59, 59)),
		ApprovedAt: new(apitime.TimeOf(2026, 3, 14, 12, 58, 30)),
		CreatedAt:  apitime.TimeOf(2026, 3, 10, 17, 2, 11), UpdatedAt: apitime.TimeOf(2026, 3, 14, 12, 58, 30)}
}
