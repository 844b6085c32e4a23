package sales

import (
	"oficina/schema/apitime"
	"oficina/schema/ids"
)

// example is a sale as its events show it in the OpenAPI document's
// webhook examples (without finance, as every event carries it): a down
// payment received by Pix and one installment still open.
func example() Sale {
	day := apitime.DateOf(2026, 3, 14)
	created := apitime.TimeOf(2026, 3, 14, 13, 5, 9)
	pix := PaymentMethod("pix")
	return Sale{Object: "sale", ID: ids.Example("sale", 1), Number: new(int64(1042)), Version: 1,
		ClientID: new(ids.Example("cli", 1)), SellerID: new(ids.Example("mem", 2)), QuoteID: new(ids.Example("quo", 1)),
		Items: []SaleItem{
			{ID: ids.Example("sli", 1), Type: ItemCustom, Name: "Air conditioner installation", Quantity: 1,
				UnitPriceCents: 45000, OriginalPriceCents: 45000, TotalPriceCents: 45000},
			{ID: ids.Example("sli", 2), Type: ItemCatalog, Name: "Condenser wall bracket", Quantity: 1,
				UnitPriceCents: 12000, OriginalPriceCents: 12000, TotalPriceCents: 12000,
				ProductID: new(ids.Example("prd", 1))},
		},
		PaymentPlan: PaymentPlan{Mode: ModeEntryAndRest, PaymentMethod: &pix, PaidAt: &day, EntryAmountCents: new(int64(15000)),
			Installments: []PaymentPlanInstallment{{AmountCents: 40000, DueDate: apitime.DateOf(2026, 4, 14)}}},
		PaymentStatus: StatusPartial, PaidCents: 15000, RemainingCents: 40000,
		SubtotalCents: 57000, DiscountCents: 2000, TotalCents: 55000,
		Installments: []Installment{
			{ID: ids.Example("ins", 1), Kind: KindEntry, Status: InstPaid, AmountCents: 15000, PaidCents: 15000,
				DueDate: day, PaidDate: &day},
			{ID: ids.Example("ins", 2), Kind: KindInstallment, Status: InstOpen, AmountCents: 40000, RemainingCents: 40000,
				DueDate: apitime.DateOf(2026, 4, 14)},
		},
		Payments: []Payment{{ID: ids.Example("pay", 1), AmountCents: 15000, PaidAt: day, PaymentMethod: &pix,
			ReceiptNumber: new("R-0731"), CreatedAt: created}},
		SaleDate: day, Notes: "Installation on Monday morning.", CreatedAt: created, UpdatedAt: created}
}
