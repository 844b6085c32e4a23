package sales

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/schema/numbering"
)

// Dashboard actions that change a sale without a sale event (spec 6.3 rule
// 7): invoices (invoice_locked, has_active_invoice), receipt numbers, and the
// seller commission being paid.

// Invoice is an invoice issued for a sale or one of its payments.
type Invoice struct {
	bun.BaseModel `bun:"table:sale_invoices,alias:inv"`

	ID         string     `bun:"id,pk"`
	CompanyID  string     `bun:"company_id"`
	SaleID     string     `bun:"sale_id"`
	PaymentID  *string    `bun:"payment_id"`
	Status     string     `bun:"status"`
	IssuedAt   time.Time  `bun:"issued_at"`
	CanceledAt *time.Time `bun:"canceled_at"`
}

// InvoiceView is the admin representation of an invoice.
type InvoiceView struct {
	Object     string        `json:"object" const:"invoice"`
	ID         string        `json:"id"`
	SaleID     string        `json:"sale_id"`
	PaymentID  *string       `json:"payment_id"`
	Status     string        `json:"status"`
	IssuedAt   apitime.Time  `json:"issued_at"`
	CanceledAt *apitime.Time `json:"canceled_at"`
}

// View renders the invoice.
func (i *Invoice) View() InvoiceView {
	return InvoiceView{Object: "invoice", ID: i.ID, SaleID: i.SaleID, PaymentID: i.PaymentID, Status: i.Status,
		IssuedAt: apitime.At(i.IssuedAt), CanceledAt: at(i.CanceledAt)}
}

// IssueInvoice issues an invoice for the sale, or for one of its active
// payments: the sale becomes invoice_locked (and the payment
// has_active_invoice). A canceled sale is 409.
func IssueInvoice(ctx context.Context, tx bun.IDB, saleID string, paymentID *string, now time.Time) (*Invoice, error) {
	s, err := Load(ctx, tx, saleID, LoadOptions{ForUpdate: true})
	if err != nil {
		return nil, err
	}
	if s.CanceledAt != nil {
		return nil, apierr.New(apierr.Conflict)
	}
	if paymentID != nil {
		i := slices.IndexFunc(s.Payments, func(y PaymentRow) bool { return y.ID == *paymentID })
		if i < 0 {
			return nil, apierr.New(apierr.ResourceNotFound)
		}
		if !s.Payments[i].Active() {
			return nil, apierr.New(apierr.Conflict)
		}
	}
	inv := &Invoice{ID: ids.New("inv"), CompanyID: s.CompanyID, SaleID: s.ID, PaymentID: paymentID, Status: "issued", IssuedAt: now}
	if _, err := tx.NewInsert().Model(inv).Exec(ctx); err != nil {
		return nil, fmt.Errorf("sales: issue invoice: %w", err)
	}
	return inv, refreshInvoiceFlags(ctx, tx, s.ID)
}

// CancelInvoice cancels an issued invoice; the flags follow the invoices
// still active. An invoice already canceled is 409.
func CancelInvoice(ctx context.Context, tx bun.IDB, invoiceID string, now time.Time) (*Invoice, error) {
	inv, err := db.ByID[Invoice](ctx, tx, "inv", invoiceID, true)
	if err != nil {
		return nil, err
	}
	if _, err := Load(ctx, tx, inv.SaleID, LoadOptions{ForUpdate: true}); err != nil {
		return nil, err
	}
	if inv.Status != "issued" {
		return nil, apierr.New(apierr.Conflict)
	}
	inv.Status, inv.CanceledAt = "canceled", &now
	if _, err := tx.NewUpdate().Model(inv).Column("status", "canceled_at").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("sales: cancel invoice: %w", err)
	}
	return inv, refreshInvoiceFlags(ctx, tx, inv.SaleID)
}

func refreshInvoiceFlags(ctx context.Context, tx bun.IDB, saleID string) error {
	if _, err := tx.NewRaw(`UPDATE sales SET invoice_locked = EXISTS (
		SELECT 1 FROM sale_invoices v WHERE v.sale_id = sales.id AND v.status = 'issued') WHERE id = ?`, saleID).Exec(ctx); err != nil {
		return fmt.Errorf("sales: invoice lock: %w", err)
	}
	if _, err := tx.NewRaw(`UPDATE sale_payments SET has_active_invoice = EXISTS (
		SELECT 1 FROM sale_invoices v WHERE v.payment_id = sale_payments.id AND v.status = 'issued') WHERE sale_id = ?`, saleID).Exec(ctx); err != nil {
		return fmt.Errorf("sales: payment invoice flags: %w", err)
	}
	return refreshDocs(ctx, tx, saleID)
}

// PayCommission records that the seller's commission on the sale was paid;
// from then on new versions are refused (3.2).
func PayCommission(ctx context.Context, tx bun.IDB, saleID string, now time.Time) error {
	s, err := Load(ctx, tx, saleID, LoadOptions{ForUpdate: true})
	if err != nil {
		return err
	}
	if s.CommissionPaidAt != nil {
		return nil
	}
	if _, err := tx.NewUpdate().Model((*Row)(nil)).Set("commission_paid_at = ?", now).Where("id = ?", s.ID).Exec(ctx); err != nil {
		return fmt.Errorf("sales: commission paid: %w", err)
	}
	return nil
}

// Receipt gives a payment its receipt number (R-0001, R-0002, … per
// company) the first time a receipt is generated; later calls keep it.
func Receipt(ctx context.Context, tx bun.IDB, saleID, paymentID string) (string, error) {
	s, err := Load(ctx, tx, saleID, LoadOptions{ForUpdate: true})
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(s.Payments, func(y PaymentRow) bool { return y.ID == paymentID })
	if i < 0 {
		return "", apierr.New(apierr.ResourceNotFound)
	}
	if r := s.Payments[i].ReceiptNumber; r != nil {
		return *r, nil
	}
	n, err := numbering.Next(ctx, tx, s.CompanyID, "receipt")
	if err != nil {
		return "", err
	}
	r := fmt.Sprintf("R-%04d", n)
	if _, err := tx.NewUpdate().Model((*PaymentRow)(nil)).Set("receipt_number = ?", r).Where("id = ?", paymentID).Exec(ctx); err != nil {
		return "", fmt.Errorf("sales: receipt number: %w", err)
	}
	return r, refreshDocs(ctx, tx, saleID)
}
