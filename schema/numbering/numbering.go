// Package numbering hands out each company's document numbers (service
// orders, sales, quotes, receipts) without gaps or duplicates: the counter
// row stays locked until the write that took a number commits or rolls back.
package numbering

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Next returns the next number of the named sequence for companyID, inside
// the write's transaction tx.
func Next(ctx context.Context, tx bun.IDB, companyID, name string) (int64, error) {
	var n int64
	err := tx.NewRaw(`INSERT INTO company_counters (company_id, name, value) VALUES (?, ?, 1)
		ON CONFLICT (company_id, name) DO UPDATE SET value = company_counters.value + 1
		RETURNING value`, companyID, name).Scan(ctx, &n)
	if err != nil {
		return 0, fmt.Errorf("numbering: next %s: %w", name, err)
	}
	return n, nil
}
