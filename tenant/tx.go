package tenant

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// ErrNoCompany guards against running a company transaction without one.
var ErrNoCompany = errors.New("tenant: no company id")

// Tx runs fn in one transaction scoped to companyID: app.company_id is set
// for the transaction only, so row-level security admits that company's rows
// and nothing else, whatever fn's queries say.
func Tx(ctx context.Context, db bun.IDB, companyID string, fn func(ctx context.Context, tx bun.Tx) error) error {
	if companyID == "" {
		return ErrNoCompany
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_id', ?, true)", companyID); err != nil {
			return fmt.Errorf("tenant: set company: %w", err)
		}
		return fn(ctx, tx)
	})
}
