// Package finance holds accounts and financial transactions, the ledger that
// sales (receivables and received payments) and completed service orders
// (revenue) post to. Financial entries emit financial_transaction.* events.
package finance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/ids"
)

// AccountRow is a finance account.
type AccountRow struct {
	bun.BaseModel `bun:"table:finance_accounts"`

	ID                  string    `bun:"id,pk"`
	CompanyID           string    `bun:"company_id"`
	Name                string    `bun:"name"`
	Kind                string    `bun:"kind"`
	IsDefault           bool      `bun:"is_default"`
	OpeningBalanceCents int64     `bun:"opening_balance_cents"`
	CreatedAt           time.Time `bun:"created_at"`
	UpdatedAt           time.Time `bun:"updated_at"`
}

// Statuses of a transaction. A sale's receivable becomes StatusSettled once
// received payments (each its own paid transaction) cover it.
const (
	StatusOpen     = "open"
	StatusPaid     = "paid"
	StatusSettled  = "settled"
	StatusCanceled = "canceled"
)

// Kinds of a transaction.
const (
	KindIncome  = "income"
	KindExpense = "expense"
)

// FinancialTransactionKind is an entry's kind.
type FinancialTransactionKind string

// Values are the kinds.
func (FinancialTransactionKind) Values() []string { return []string{KindIncome, KindExpense} }

// FinancialTransactionStatus is an entry's status.
type FinancialTransactionStatus string

// Values are the statuses.
func (FinancialTransactionStatus) Values() []string {
	return []string{StatusOpen, StatusPaid, StatusSettled, StatusCanceled}
}

// TransactionRow is a financial transaction.
type TransactionRow struct {
	bun.BaseModel `bun:"table:financial_transactions"`

	ID          string  `bun:"id,pk"`
	CompanyID   string  `bun:"company_id"`
	AccountID   *string `bun:"account_id"`
	Kind        string  `bun:"kind"`
	Status      string  `bun:"status"`
	Description string  `bun:"description"`
	AmountCents int64   `bun:"amount_cents"`
	// OriginalAmountCents is set on a sale's receivable installment: the
	// installment's amount, while AmountCents is what is still to receive.
	OriginalAmountCents *int64        `bun:"original_amount_cents"`
	TransactionDate     apitime.Date  `bun:"transaction_date,type:date"`
	DueDate             *apitime.Date `bun:"due_date,type:date"`
	PaymentDate         *apitime.Date `bun:"payment_date,type:date"`
	SaleID              *string       `bun:"sale_id"`
	InstallmentID       *string       `bun:"installment_id"`
	PaymentID           *string       `bun:"payment_id"`
	ServiceOrderID      *string       `bun:"service_order_id"`
	CreatedAt           time.Time     `bun:"created_at"`
	UpdatedAt           time.Time     `bun:"updated_at"`
}

// FinancialTransaction is the GET representation of a financial transaction.
type FinancialTransaction struct {
	Object      string                     `json:"object" const:"financial_transaction"`
	ID          string                     `json:"id"`
	AccountID   *string                    `json:"account_id"`
	Kind        FinancialTransactionKind   `json:"kind"`
	Status      FinancialTransactionStatus `json:"status"`
	Description string                     `json:"description"`
	AmountCents int64                      `json:"amount_cents"`
	// OriginalAmountCents: see TransactionRow.
	OriginalAmountCents *int64        `json:"original_amount_cents"`
	TransactionDate     apitime.Date  `json:"transaction_date"`
	DueDate             *apitime.Date `json:"due_date"`
	PaymentDate         *apitime.Date `json:"payment_date"`
	SaleID              *string       `json:"sale_id"`
	InstallmentID       *string       `json:"installment_id"`
	PaymentID           *string       `json:"payment_id"`
	ServiceOrderID      *string       `json:"service_order_id"`
	CreatedAt           apitime.Time  `json:"created_at"`
	UpdatedAt           apitime.Time  `json:"updated_at"`
}

// TransactionView renders the GET representation.
func (t *TransactionRow) View() FinancialTransaction {
	return FinancialTransaction{Object: "financial_transaction", ID: t.ID, AccountID: t.AccountID,
		Kind: FinancialTransactionKind(t.Kind), Status: FinancialTransactionStatus(t.Status),
		Description: t.Description, AmountCents: t.AmountCents, OriginalAmountCents: t.OriginalAmountCents,
		TransactionDate: t.TransactionDate, DueDate: t.DueDate,
		PaymentDate: t.PaymentDate, SaleID: t.SaleID, InstallmentID: t.InstallmentID, PaymentID: t.PaymentID, ServiceOrderID: t.ServiceOrderID,
		CreatedAt: apitime.At(t.CreatedAt), UpdatedAt: apitime.At(t.UpdatedAt)}
}

// ResolveAccount returns the account to post to: the given id (which must
// belong to the company: 404 otherwise) or the company's default account
// (nil when it has none).
func ResolveAccount(ctx context.Context, tx bun.IDB, accountID *string) (*string, error) {
	if accountID != nil {
		a, err := db.ByID[AccountRow](ctx, tx, "acc", *accountID, false)
		if err != nil {
			return nil, err
		}
		return &a.ID, nil
	}
	a := new(AccountRow)
	err := tx.NewSelect().Model(a).Where("is_default").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("finance: default account: %w", err)
	}
	return &a.ID, nil
}

// Post inserts a transaction (id, timestamps and company filled in).
func Post(ctx context.Context, tx bun.IDB, companyID string, t *TransactionRow, now time.Time) error {
	t.ID = ids.New("ftx")
	t.CompanyID = companyID
	t.CreatedAt, t.UpdatedAt = now, now
	if t.Status == "" {
		t.Status = "open"
	}
	if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
		return fmt.Errorf("finance: post: %w", err)
	}
	return nil
}

// CreateAccount adds an account (dashboard action); the first account of a
// company, or one marked default, becomes the default.
func CreateAccount(ctx context.Context, tx bun.IDB, companyID, name string, makeDefault bool, now time.Time) (*AccountRow, error) {
	if name == "" {
		return nil, apierr.Invalid("name", apierr.Required)
	}
	n, err := tx.NewSelect().Model((*AccountRow)(nil)).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("finance: count accounts: %w", err)
	}
	a := &AccountRow{ID: ids.New("acc"), CompanyID: companyID, Name: name, Kind: "checking", IsDefault: makeDefault || n == 0, CreatedAt: now, UpdatedAt: now}
	if a.IsDefault {
		if _, err := tx.NewUpdate().Model((*AccountRow)(nil)).Set("is_default = false").Where("is_default").Exec(ctx); err != nil {
			return nil, fmt.Errorf("finance: clear default: %w", err)
		}
	}
	if _, err := tx.NewInsert().Model(a).Exec(ctx); err != nil {
		return nil, fmt.Errorf("finance: create account: %w", err)
	}
	return a, nil
}
