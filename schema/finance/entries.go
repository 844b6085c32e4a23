package finance

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/streams"
	"oficina/tenant"
)

// Limits of a manual entry.
const (
	MaxDescription = 500
	MaxAmountCents = 1_000_000_000_000 // as a sale's amounts
)

// FinancialTransactionCreate is a manual entry made in finance (dashboard): an income or an
// expense, open until marked paid.
type FinancialTransactionCreate struct {
	Kind            string        `json:"kind"` // income or expense
	Description     string        `json:"description"`
	AmountCents     *int64        `json:"amount_cents"`
	TransactionDate *apitime.Date `json:"transaction_date"` // default: today in the company's time zone
	DueDate         *apitime.Date `json:"due_date" api:"nullable"`
	AccountID       *string       `json:"account_id" api:"nullable"` // default: the company's default account
}

// CreateEntry posts a manual entry as one write of w and records
// financial_transaction.created.
func CreateEntry(ctx context.Context, w *streams.Write, in FinancialTransactionCreate) (*TransactionRow, error) {
	var f apierr.Fields
	if in.Kind != KindIncome && in.Kind != KindExpense {
		f.Add("kind", apierr.InvalidValue)
	}
	if utf8.RuneCountInString(in.Description) > MaxDescription {
		f.Add("description", apierr.TooLong)
	}
	switch {
	case in.AmountCents == nil:
		f.Add("amount_cents", apierr.Required)
	case *in.AmountCents < 1 || *in.AmountCents > MaxAmountCents:
		f.Add("amount_cents", apierr.OutOfRange)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	account, err := ResolveAccount(ctx, w.Tx, in.AccountID)
	if err != nil {
		return nil, err
	}
	date := in.TransactionDate
	if date == nil {
		d, err := today(ctx, w)
		if err != nil {
			return nil, err
		}
		date = &d
	}
	t := &TransactionRow{AccountID: account, Kind: in.Kind, Status: StatusOpen, Description: strings.TrimSpace(in.Description),
		AmountCents: *in.AmountCents, TransactionDate: *date, DueDate: in.DueDate}
	if err := Post(ctx, w.Tx, w.CompanyID, t, w.At); err != nil {
		return nil, err
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventTransactionCreated, Object: t.View()}); err != nil {
		return nil, err
	}
	return t, nil
}

// GetTransaction reads an entry of the transaction's company (404 for
// another company's id).
func GetTransaction(ctx context.Context, tx bun.IDB, id string, forUpdate bool) (*TransactionRow, error) {
	t, err := db.ByID[TransactionRow](ctx, tx, "ftx", id, forUpdate)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// FinancialTransactionMarkPaid is the body of mark_paid.
type FinancialTransactionMarkPaid struct {
	PaymentDate   *apitime.Date `json:"payment_date"`   // default: today in the company's time zone
	AccountID     *string       `json:"account_id"`     // default: the entry's account
	PaymentMethod *string       `json:"payment_method"` // a sale's installment only: the payment's method
}

// SalePayment records the payment of a sale's receivable t, dated paidAt
// (spec 5.4: marking a sale installment paid records the sale payment).
// Package sales provides it; finance sits below sales.
type SalePayment func(ctx context.Context, w *streams.Write, t *TransactionRow, paidAt apitime.Date, in FinancialTransactionMarkPaid) error

// MarkPaid marks an open entry paid as one write of w and records
// financial_transaction.updated then financial_transaction.paid. A sale's
// open receivable is paid through salePayment instead, which records the
// sale payment and its own events. An entry already paid (or settled) or
// canceled is 409 conflict (spec 7).
func MarkPaid(ctx context.Context, w *streams.Write, id string, in FinancialTransactionMarkPaid, salePayment SalePayment) (*TransactionRow, error) {
	// A sale's entry is read without a lock: the sale write locks the sale
	// first and its entries after, and this must take them in that order.
	t, err := GetTransaction(ctx, w.Tx, id, false)
	if err != nil {
		return nil, err
	}
	if t.SaleID == nil {
		if t, err = GetTransaction(ctx, w.Tx, id, true); err != nil {
			return nil, err
		}
	}
	if t.Status != StatusOpen {
		return nil, apierr.New(apierr.Conflict)
	}
	paidAt := in.PaymentDate
	if paidAt == nil {
		d, err := today(ctx, w)
		if err != nil {
			return nil, err
		}
		paidAt = &d
	}
	if t.SaleID != nil {
		if err := salePayment(ctx, w, t, *paidAt, in); err != nil {
			return nil, err
		}
		return GetTransaction(ctx, w.Tx, id, false)
	}
	if in.PaymentMethod != nil {
		return nil, apierr.Invalid("payment_method", apierr.NotAllowed)
	}
	before := t.View()
	if in.AccountID != nil {
		if t.AccountID, err = ResolveAccount(ctx, w.Tx, in.AccountID); err != nil {
			return nil, err
		}
	}
	t.Status, t.PaymentDate, t.UpdatedAt = StatusPaid, paidAt, w.At
	if _, err := w.Tx.NewUpdate().Model(t).Column("account_id", "status", "payment_date", "updated_at").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("finance: mark paid: %w", err)
	}
	after := t.View()
	_, err = streams.Record(ctx, w,
		streams.Change{Type: EventTransactionUpdated, Object: after, Before: before},
		streams.Change{Type: EventTransactionPaid, Object: after})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// DeleteTransaction deletes an entry as one write of w and records
// financial_transaction.deleted with the entry as it was. An entry of a
// sale is 409 conflict (spec 7: it follows the sale, which cancels it). A
// service order's revenue may be deleted; completing the order again posts
// it anew.
func DeleteTransaction(ctx context.Context, w *streams.Write, id string) (*TransactionRow, error) {
	t, err := GetTransaction(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if t.SaleID != nil {
		return nil, apierr.New(apierr.Conflict)
	}
	if _, err := w.Tx.NewDelete().Model(t).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("finance: delete: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventTransactionDeleted, Object: t.View()}); err != nil {
		return nil, err
	}
	return t, nil
}

// today is the write's date in the company's time zone (UTC when the zone
// is unknown).
func today(ctx context.Context, w *streams.Write) (apitime.Date, error) {
	c, err := tenant.GetCompany(ctx, w.Tx, w.CompanyID)
	if err != nil {
		return apitime.Date{}, err
	}
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		loc = time.UTC
	}
	y, m, d := w.At.In(loc).Date()
	return apitime.Date{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}, nil
}
