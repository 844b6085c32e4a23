// Package numbering hands out each company's document numbers (service
// orders, sales, quotes, receipts) without gaps or duplicates: the counter
// row stays locked until the write that took a number commits or rolls back.
// Callers take their numbers as late in the write as they can, since every
// other write of the company that needs the same counter waits for that
// commit.
package numbering

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/apierr"
)

// Next returns the next number of the named sequence for companyID, inside
// the write's transaction tx.
func Next(ctx context.Context, tx bun.IDB, companyID, name string) (int64, error) {
	ns, err := NextAll(ctx, tx, companyID, name)
	if err != nil {
		return 0, err
	}
	return ns[0], nil
}

// NextAll is Next for several sequences at once, in one statement: the
// numbers come back in the order of names, and the rows are locked in that
// order (writers of the same kind pass the same order, so they cannot
// deadlock). The statement is a function whose plan PostgreSQL keeps
// (sql/oficina_next_numbers.sql).
func NextAll(ctx context.Context, tx bun.IDB, companyID string, names ...string) ([]int64, error) {
	var ns []int64
	err := tx.NewRaw("SELECT oficina_next_numbers(?, ?)", companyID, pgdialect.Array(names)).Scan(ctx, pgdialect.Array(&ns))
	if err != nil {
		return nil, fmt.Errorf("numbering: next %v: %w", names, err)
	}
	if len(ns) != len(names) {
		return nil, fmt.Errorf("numbering: next %v: %d numbers", names, len(ns))
	}
	return ns, nil
}

// NextWithin is Next of sequence for a record that counts against a monthly
// quota (orders, sales): it also counts one more on the counter quotaName
// and refuses with 403 plan_limit_reached once that counter passes quota.
// A nil quota counts nothing. Both numbers come from one statement, the
// quota's row locked first; the rows stay locked until the write ends, so
// concurrent creations neither overshoot the quota nor share a number, and
// a rolled-back write gives both back.
func NextWithin(ctx context.Context, tx bun.IDB, companyID, sequence string, quota *int, quotaName string) (int64, error) {
	if quota == nil {
		return Next(ctx, tx, companyID, sequence)
	}
	ns, err := NextAll(ctx, tx, companyID, quotaName, sequence)
	if err != nil {
		return 0, err
	}
	if ns[0] > int64(*quota) {
		return 0, apierr.New(apierr.PlanLimitReached)
	}
	return ns[1], nil
}
