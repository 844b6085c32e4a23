package finance

import "oficina/streams"

// Event types of financial entries; data.object is the entry as its GET
// returns it (FinancialTransaction). They need finance read (spec 6.3 rule 6).
const (
	EventTransactionCreated = "financial_transaction.created"
	EventTransactionUpdated = "financial_transaction.updated"
	EventTransactionPaid    = "financial_transaction.paid"
	EventTransactionDeleted = "financial_transaction.deleted"
)

// EventTypes describes the finance events for the catalogue.
func EventTypes() []streams.EventType {
	return []streams.EventType{
		{Name: EventTransactionCreated, Kind: "financial_transaction", Object: example(),
			Summary: "A financial entry was posted: a manual entry, a sale's receivable installment or received payment, or a completed service order's revenue."},
		{Name: EventTransactionUpdated, Kind: "financial_transaction", Object: example(), ChangedFields: []string{"account_id", "due_date"},
			Summary: "A financial entry changed (status, amount still to receive, dates, account); changed_fields names the fields."},
		{Name: EventTransactionPaid, Kind: "financial_transaction", Object: example(),
			Summary: "An open entry was marked paid in finance (sent after its financial_transaction.updated). Marking a sale's installment paid records the sale payment instead."},
		{Name: EventTransactionDeleted, Kind: "financial_transaction", Object: example(),
			Summary: "A financial entry was deleted; the object is the entry as it was. Entries of a sale are never deleted (they are canceled with it)."},
	}
}
