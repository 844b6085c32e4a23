package finance

import (
	"oficina/schema/apitime"
	"oficina/schema/ids"
)

// example is a financial entry as its events show it in the OpenAPI
// document's webhook examples: the open receivable of a sale's second
// installment.
func example() FinancialTransaction {
	return FinancialTransaction{Object: "financial_transaction", ID: ids.Example("ftx", 1), AccountID: new(ids.Example("acc", 1)),
		Kind: KindIncome, Status: StatusOpen, Description: "Parcela de venda", AmountCents: 40000,
		OriginalAmountCents: new(int64(40000)), TransactionDate: apitime.DateOf(2026, 3, 14),
		DueDate: new(apitime.DateOf(2026, 4, 14)), SaleID: new(ids.Example("sale", 1)),
		InstallmentID: new(ids.Example("ins", 2)),
		CreatedAt:     apitime.TimeOf(2026, 3, 14, 13, 5, 9), UpdatedAt: apitime.TimeOf(2026, 3, 14, 13, 5, 9)}
}
