package sales

import (
	"context"

	"oficina/schema/apitime"
	"oficina/schema/finance"
	"oficina/streams"
)

// Event types of sales (6.4). data.object is the sale as GET /sales/{id}
// returns it without finance (Sale without account_id and
// finance_transactions, spec 6.3 rule 6), after the write. A write's own
// events follow its sale.updated.
const (
	EventCreated           = "sale.created"
	EventUpdated           = "sale.updated"
	EventPaid              = "sale.paid"
	EventPaymentRegistered = "sale.payment_registered"
	EventPaymentCanceled   = "sale.payment_canceled"
	EventCanceled          = "sale.canceled"
)

// EventTypes describes the sale events for the catalogue.
func EventTypes() []streams.EventType {
	return []streams.EventType{
		{Name: EventCreated, Kind: "sale", Object: example(),
			Summary: "A sale was registered: through the API, in the dashboard, or by converting a quote."},
		{Name: EventUpdated, Kind: "sale", Object: example(), ChangedFields: []string{"installments", "paid_cents", "payment_status", "payments", "remaining_cents"},
			Summary: "A sale's representation changed (a version, a payment, a reversal, a cancellation, rescheduling, notes, production, overdue); changed_fields names the fields. Invoice locks and receipt numbers send nothing."},
		{Name: EventPaymentRegistered, Kind: "sale", Object: example(),
			Summary: "A payment was received on the sale (through the API, or by marking its installment paid in finance); the new payment is the last of payments."},
		{Name: EventPaid, Kind: "sale", Object: example(),
			Summary: "A received payment brought the balance to zero: payment_status is now paid."},
		{Name: EventPaymentCanceled, Kind: "sale", Object: example(),
			Summary: "A received payment was reversed (its canceled_at is set): by POST /sales/{id}/payments/{payment_id}/cancel, or once per payment a sale cancellation reversed."},
		{Name: EventCanceled, Kind: "sale", Object: example(),
			Summary: "The sale was canceled (canceled_at set): its payments reversed, deducted stock returned, finance entries canceled."},
	}
}

// PayReceivable records the payment of a sale's open receivable entry t:
// its whole remaining amount on its installment, dated paidAt (spec 5.4:
// mark_paid on a sale installment records the sale payment). It is the
// finance.SalePayment of finance.MarkPaid, and records what Receive records.
func PayReceivable(ctx context.Context, w *streams.Write, t *finance.TransactionRow, paidAt apitime.Date, in finance.FinancialTransactionMarkPaid) error {
	amount := t.AmountCents
	_, err := Receive(ctx, w, *t.SaleID, PaymentCreate{AmountCents: &amount, PaidAt: &paidAt,
		PaymentMethod: (*PaymentMethod)(in.PaymentMethod), InstallmentID: t.InstallmentID, AccountID: in.AccountID})
	return err
}
