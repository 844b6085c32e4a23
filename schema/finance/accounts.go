package finance

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"oficina/schema/apitime"
)

// Account is the representation of an account (admin API).
type Account struct {
	Object              string       `json:"object" const:"finance_account"`
	ID                  string       `json:"id"`
	Name                string       `json:"name"`
	Kind                string       `json:"kind"`
	IsDefault           bool         `json:"is_default"`
	OpeningBalanceCents int64        `json:"opening_balance_cents"`
	CreatedAt           apitime.Time `json:"created_at"`
	UpdatedAt           apitime.Time `json:"updated_at"`
}

// ViewAccount renders an account.
func ViewAccount(a *AccountRow) Account {
	return Account{Object: "finance_account", ID: a.ID, Name: a.Name, Kind: a.Kind, IsDefault: a.IsDefault,
		OpeningBalanceCents: a.OpeningBalanceCents, CreatedAt: apitime.At(a.CreatedAt), UpdatedAt: apitime.At(a.UpdatedAt)}
}

// ListAccounts lists the company's accounts, oldest first.
func ListAccounts(ctx context.Context, tx bun.IDB) ([]Account, error) {
	var rows []AccountRow
	if err := tx.NewSelect().Model(&rows).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("finance: list accounts: %w", err)
	}
	out := make([]Account, len(rows))
	for i := range rows {
		out[i] = ViewAccount(&rows[i])
	}
	return out, nil
}
