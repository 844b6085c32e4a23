package sales

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/finance"
	"oficina/schema/ids"
	"oficina/streams"
)

// Descriptions of the transactions a sale posts (the dashboard shows them).
const (
	descReceivable = "Parcela de venda"
	descReceived   = "Recebimento de venda"
)

// syncFinance makes a tracked sale's finance transactions follow its
// installments and payments, and returns their events:
//
//   - one receivable per installment: amount_cents is what is still to
//     receive, original_amount_cents the installment's amount; status open,
//     settled once received payments cover it, canceled when the
//     installment is removed or the sale canceled;
//   - one received (paid) transaction per payment, canceled when the payment
//     is reversed.
//
// So the open receivables add up to the balance and the paid transactions
// to paid_cents. known says s.Transactions holds the current rows (a new
// sale has none); otherwise they are read first.
func syncFinance(ctx context.Context, tx bun.IDB, s *Row, known bool, now time.Time, b *batch) ([]streams.Change, error) {
	if !s.TrackInFinance {
		return nil, nil
	}
	if !known {
		if err := s.loadTransactions(ctx, tx); err != nil {
			return nil, err
		}
	}
	byInst := map[string]*finance.TransactionRow{}
	byPay := map[string]*finance.TransactionRow{}
	for i := range s.Transactions {
		t := &s.Transactions[i]
		switch {
		case t.InstallmentID != nil && t.PaymentID == nil:
			byInst[*t.InstallmentID] = t
		case t.PaymentID != nil:
			byPay[*t.PaymentID] = t
		}
	}
	var want []finance.TransactionRow
	live := map[string]bool{}
	for i := range s.Installments {
		n := &s.Installments[i]
		live[n.ID] = true
		want = append(want, receivable(s, n, byInst[n.ID]))
	}
	for id, t := range byInst {
		if live[id] {
			continue
		}
		// The installment is removed by this write: its receivable is
		// canceled and loses the link, as the same-company foreign key
		// does to the row when the installment goes.
		if t.Status == finance.StatusCanceled {
			t.InstallmentID = nil
			continue
		}
		c := *t
		c.Status, c.InstallmentID = finance.StatusCanceled, nil
		want = append(want, c)
	}
	for i := range s.Payments {
		want = append(want, received(s, &s.Payments[i], byPay[s.Payments[i].ID]))
	}
	return writeTransactions(tx, s, want, now, b)
}

func receivable(s *Row, n *InstallmentRow, old *finance.TransactionRow) finance.TransactionRow {
	t := finance.TransactionRow{CompanyID: s.CompanyID, Kind: "income", Description: descReceivable,
		SaleID: &s.ID, InstallmentID: &n.ID, TransactionDate: s.SaleDate}
	if old != nil {
		t = *old
	}
	orig, due := n.AmountCents, n.DueDate
	t.OriginalAmountCents, t.DueDate, t.PaymentDate = &orig, &due, nil
	switch {
	case s.CanceledAt != nil || n.Status == InstCanceled:
		t.Status = finance.StatusCanceled
	case n.Remaining() == 0:
		t.Status, t.AmountCents, t.PaymentDate = finance.StatusSettled, 0, n.PaidDate
	default:
		t.Status, t.AmountCents, t.AccountID = finance.StatusOpen, n.Remaining(), s.AccountID
	}
	if old == nil {
		t.AccountID = s.AccountID
	}
	return t
}

func received(s *Row, y *PaymentRow, old *finance.TransactionRow) finance.TransactionRow {
	if old != nil {
		t := *old
		if !y.Active() {
			t.Status = finance.StatusCanceled
		}
		return t
	}
	paid := y.PaidAt
	acc := y.AccountID
	if acc == nil {
		acc = s.AccountID
	}
	t := finance.TransactionRow{CompanyID: s.CompanyID, Kind: "income", Status: finance.StatusPaid, Description: descReceived,
		AmountCents: y.AmountCents, TransactionDate: paid, PaymentDate: &paid, SaleID: &s.ID, PaymentID: &y.ID, AccountID: acc}
	if !y.Active() || s.CanceledAt != nil {
		t.Status = finance.StatusCanceled
	}
	return t
}

// writeTransactions adds to b the inserts of new transactions and the
// updates of changed ones, returning financial_transaction.created/updated
// events.
func writeTransactions(tx bun.IDB, s *Row, want []finance.TransactionRow, now time.Time, b *batch) ([]streams.Change, error) {
	old := map[string]*finance.TransactionRow{}
	for i := range s.Transactions {
		old[s.Transactions[i].ID] = &s.Transactions[i]
	}
	var add []finance.TransactionRow
	var changes []streams.Change
	for _, t := range want {
		if t.ID == "" {
			t.ID, t.CreatedAt, t.UpdatedAt = ids.New("ftx"), now, now
			add = append(add, t)
			continue
		}
		o := old[t.ID]
		if sameTransaction(o, &t) {
			continue
		}
		t.UpdatedAt = now
		if err := b.add(tx.NewUpdate().Model(&t).Column("account_id", "status", "amount_cents", "original_amount_cents",
			"due_date", "payment_date", "installment_id", "updated_at").WherePK()); err != nil {
			return nil, err
		}
		changes = append(changes, streams.Change{Type: finance.EventTransactionUpdated, Object: t.View(), Before: o.View()})
		*o = t
	}
	if len(add) > 0 {
		if err := b.insert(tx, &add, len(add)); err != nil {
			return nil, err
		}
		for i := range add {
			changes = append(changes, streams.Change{Type: finance.EventTransactionCreated, Object: add[i].View()})
		}
		s.Transactions = append(s.Transactions, add...)
	}
	return changes, nil
}

func sameTransaction(a, b *finance.TransactionRow) bool {
	return eqPtr(a.AccountID, b.AccountID) && eqPtr(a.InstallmentID, b.InstallmentID) && a.Status == b.Status && a.AmountCents == b.AmountCents &&
		eqPtr(a.OriginalAmountCents, b.OriginalAmountCents) && sameDate(a.DueDate, b.DueDate) &&
		sameDate(a.PaymentDate, b.PaymentDate)
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// financeTx is a finance transaction of a sale.
type financeTx = finance.TransactionRow
