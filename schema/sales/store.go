package sales

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"oficina/schema/apitime"
)

// saleColumns are the columns a write may change after creation.
var saleColumns = []string{"version", "client_id", "seller_id", "payment_status", "overdue", "subtotal_cents",
	"discount_cents", "shipping_cents", "additional_costs_cents", "total_cents", "paid_cents", "payment_plan",
	"account_id", "decrement_stock", "estimated_delivery_date", "notes", "production_status", "production_notes",
	"canceled_at", "cancel_reason", "items_doc", "installments_doc", "payments_doc", "updated_at"}

// persist adds to b what a write changed between before and after: the
// sale row, installments (added, changed, removed) and payments with their
// allocations (added, changed).
func persist(tx bun.IDB, b *batch, before, after *Row, now time.Time) error {
	after.UpdatedAt = now
	if err := after.encodeChildren(); err != nil {
		return err
	}
	if err := b.add(tx.NewUpdate().Model(after).Column(saleColumns...).WherePK()); err != nil {
		return err
	}
	if err := persistInstallments(tx, b, before.Installments, after.Installments, now); err != nil {
		return err
	}
	return persistPayments(tx, b, before.Payments, after.Payments, now)
}

func persistInstallments(tx bun.IDB, b *batch, before, after []InstallmentRow, now time.Time) error {
	old := make(map[string]*InstallmentRow, len(before))
	for i := range before {
		old[before[i].ID] = &before[i]
	}
	var add []InstallmentRow
	seen := map[string]bool{}
	for _, n := range after {
		seen[n.ID] = true
		o, ok := old[n.ID]
		switch {
		case !ok:
			add = append(add, n)
		case !sameInstallment(o, &n):
			n.UpdatedAt = now
			if err := b.add(tx.NewUpdate().Model(&n).Column("amount_cents", "paid_cents", "due_date", "paid_date", "status", "updated_at").
				WherePK()); err != nil {
				return err
			}
		}
	}
	var gone []string
	for id := range old {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		if err := b.add(tx.NewDelete().Model((*InstallmentRow)(nil)).Where("id IN (?)", bun.List(gone))); err != nil {
			return err
		}
	}
	return b.insert(tx, &add, len(add))
}

func sameInstallment(a, b *InstallmentRow) bool {
	return a.AmountCents == b.AmountCents && a.PaidCents == b.PaidCents && a.DueDate.Equal(b.DueDate.Time) &&
		sameDate(a.PaidDate, b.PaidDate) && a.Status == b.Status
}

func sameDate(a, b *apitime.Date) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b.Time)
}

func persistPayments(tx bun.IDB, b *batch, before, after []PaymentRow, now time.Time) error {
	old := make(map[string]*PaymentRow, len(before))
	for i := range before {
		old[before[i].ID] = &before[i]
	}
	var add []PaymentRow
	var allocs []AllocationRow
	for _, y := range after {
		o, ok := old[y.ID]
		if !ok {
			add = append(add, y)
			allocs = append(allocs, y.Allocations...)
			continue
		}
		if (o.CanceledAt == nil) != (y.CanceledAt == nil) {
			y.UpdatedAt = now
			if err := b.add(tx.NewUpdate().Model(&y).Column("canceled_at", "cancel_reason", "updated_at").WherePK()); err != nil {
				return err
			}
		}
	}
	if err := b.insert(tx, &add, len(add)); err != nil {
		return err
	}
	return b.insert(tx, &allocs, len(allocs))
}

// batch collects statements to send in one round trip: with the simple
// query protocol PostgreSQL runs a multi-statement query as one message,
// in order, stopping at the first error (the transaction then fails).
type batch struct {
	gen schema.QueryGen
	sql []byte
}

func newBatch(tx bun.IDB) *batch { return &batch{gen: schema.NewQueryGen(tx.Dialect())} }

// add appends a query of the batch.
func (b *batch) add(q schema.QueryAppender) error {
	if len(b.sql) > 0 {
		b.sql = append(b.sql, ";\n"...)
	}
	var err error
	if b.sql, err = q.AppendQuery(b.gen, b.sql); err != nil {
		return fmt.Errorf("sales: build statement: %w", err)
	}
	return nil
}

// insert appends an insert of model unless it is an empty slice.
func (b *batch) insert(tx bun.IDB, model any, n int) error {
	if n == 0 {
		return nil
	}
	return b.add(tx.NewInsert().Model(model))
}

// AppendQuery appends the batch's statements, already formatted, so a
// write can send them with its COMMIT (streams.Write.Later).
func (b *batch) AppendQuery(_ schema.QueryGen, dst []byte) ([]byte, error) {
	if len(b.sql) == 0 {
		return append(dst, "SELECT 1"...), nil
	}
	return append(dst, b.sql...), nil
}

// exec sends the batch.
func (b *batch) exec(ctx context.Context, tx bun.IDB) error {
	if len(b.sql) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(b.sql)); err != nil {
		return fmt.Errorf("sales: write: %w", err)
	}
	b.sql = b.sql[:0]
	return nil
}
