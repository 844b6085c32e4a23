package tenant_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// DESIGN "Tenancy": every company transaction is scoped to its company —
// on the pool (the setting sent with BEGIN) and nested in another
// transaction (a savepoint, the setting a statement of its own) — and its
// first statements run inside it.
func TestCompanyTransactionIsScopedHoweverItBegins(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ctx := context.Background()
	check := func(name string, idb bun.IDB) {
		t.Helper()
		err := tenant.TxWith(ctx, idb, co.Company.ID, "SELECT set_config('app.probe', 'first', true)", func(ctx context.Context, tx bun.Tx) error {
			var company, probe string
			var n int
			if err := tx.NewRaw("SELECT current_setting('app.company_id'), current_setting('app.probe'), (SELECT count(*) FROM companies)").
				Scan(ctx, &company, &probe, &n); err != nil {
				return err
			}
			if company != co.Company.ID || probe != "first" || n != 1 {
				t.Errorf("%s: company %q, first statement %q, %d companies visible", name, company, probe, n)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	check("pool", co.DB)
	outer, err := co.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Rollback()
	check("nested", outer)
}
