package tenant_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// Tenancy: the service role is neither superuser nor BYPASSRLS, and a query
// outside the company transaction sees no rows at all.
func TestRowLevelSecurityIsTheNet(t *testing.T) {
	t.Parallel()
	db := testkit.DB(t)
	ctx := context.Background()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})

	var super, bypass bool
	if err := db.NewRaw("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").Scan(ctx, &super, &bypass); err != nil {
		t.Fatal(err)
	}
	if super || bypass {
		t.Fatalf("service role: superuser=%v bypassrls=%v", super, bypass)
	}
	for _, table := range []string{"companies", "members", "api_keys", "service_order_types"} {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows visible outside a company transaction", table, n)
		}
		var enabled, forced bool
		if err := testkit.OwnerDB(t).NewRaw("SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = ?", table).Scan(ctx, &enabled, &forced); err != nil {
			t.Fatal(err)
		}
		if !enabled || !forced {
			t.Errorf("%s: rls enabled=%v forced=%v", table, enabled, forced)
		}
	}
	// Inside A's transaction, B's rows do not exist even when asked for.
	a.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var n int
		if err := tx.NewRaw("SELECT count(*) FROM members WHERE company_id = ?", b.Company.ID).Scan(ctx, &n); err != nil {
			return err
		}
		if n != 0 {
			t.Errorf("A sees %d of B's members", n)
		}
		return nil
	})
	// And A cannot write rows for B.
	err := tenant.Tx(ctx, db, a.Company.ID, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("INSERT INTO members (id, company_id, name, role) VALUES ('mem_x', ?, 'x', 'OWNER')", b.Company.ID).Exec(ctx)
		return err
	})
	if err == nil {
		t.Error("A wrote a member into B")
	}
	if err := tenant.Tx(ctx, db, "", func(context.Context, bun.Tx) error { return nil }); err == nil {
		t.Error("a transaction without a company ran")
	}
}

// Only the SHA-256 of a key is stored.
func TestOnlyTheKeyHashIsStored(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	k := co.Key(t, co.Owner, "team:read")
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var hash []byte
		var prefix string
		if err := tx.NewRaw("SELECT secret_hash, display_prefix FROM api_keys WHERE id = ?", k.ID).Scan(ctx, &hash, &prefix); err != nil {
			return err
		}
		if string(hash) != string(tenant.HashKey(k.Secret)) || len(prefix) >= len(k.Secret)/2 {
			t.Errorf("stored hash/prefix wrong")
		}
		var n int
		err := tx.NewRaw("SELECT count(*) FROM api_keys WHERE position(? in array_to_string(permissions, ',') || display_prefix || coalesce(name,'')) > 0", k.Secret).Scan(ctx, &n)
		if err == nil && n != 0 {
			t.Errorf("secret stored in clear")
		}
		return err
	})
}
