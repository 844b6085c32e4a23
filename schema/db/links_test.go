package db_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/tenant"
)

// unlinkedColumns are the *_id columns of company tables left without a
// foreign key on purpose, with why (docs/security.md, "Database roles").
var unlinkedColumns = map[string]string{
	"sale_items.product_id":                             "hot row: a popular product's stock, locked by every sale of it (decision 0007)",
	"sale_items.variation_id":                           "hot row: as sale_items.product_id",
	"stock_movements.product_id":                        "hot row: as sale_items.product_id",
	"stock_movements.variation_id":                      "hot row: as sale_items.product_id",
	"sales.contract_id":                                 "no table: the dashboard's monthly contract is not stored here",
	"notifications.subject_id":                          "polymorphic: subject_type names the table",
	"appointment_calendar_mirrors.external_calendar_id": "an id in the calendar provider",
	"appointment_calendar_mirrors.external_event_id":    "an id in the calendar provider",
	"calendar_connections.external_calendar_id":         "an id in the calendar provider",
	"webhook_endpoints.secret_key_id":                   "a key id of OFICINA_SECRET_KEYS, not a row",
	"webhook_endpoints.oauth2_client_id":                "the client id at the receiver's authorization server, not a row",
	"webhook_deliveries.endpoint_id":                    logAppend,
	"webhook_attempts.endpoint_id":                      logAppend,
	"webhook_deliveries.event_id":                       logLink,
	"webhook_attempts.delivery_id":                      logLink,
	"webhook_recover_items.delivery_id":                 logLink,
	"webhook_recover_items.resend_id":                   logLink,
}

// logAppend is why the log's links to its endpoint are not keys.
const logAppend = "hot row: every delivery and attempt appended would lock its endpoint's row (decision 0032)"

// logLink is why links into the time-partitioned log are not keys.
const logLink = "into the log, partitioned by day: a key would have dropping a day scan the rows pointing into it (decision 0027)"

// Issue 15 item 3: every foreign key between two company tables is a
// same-company key (the child's company_id references the parent's), and
// every *_id column of a company table is in one, but the documented
// exceptions: a later migration can bring back neither a global key nor a
// link without a key.
func TestEveryLinkBetweenCompanyTablesIsSameCompany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var global []string
	err := testkit.OwnerDB(t).NewRaw(`SELECT c.conname FROM pg_constraint c
		WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
		  AND EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.conrelid AND x.attname = 'company_id' AND NOT x.attisdropped)
		  AND EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.confrelid AND x.attname = 'company_id' AND NOT x.attisdropped)
		  AND NOT EXISTS (SELECT 1 FROM unnest(c.conkey, c.confkey) AS k(child, parent)
		                    JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = k.child
		                    JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = k.parent
		                   WHERE ca.attname = 'company_id' AND pa.attname = 'company_id')
		ORDER BY 1`).Scan(ctx, &global)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range global {
		t.Errorf("%s links two companies' tables without company_id → company_id", name)
	}

	var unlinked []string
	err = testkit.OwnerDB(t).NewRaw(`SELECT c.relname || '.' || a.attname FROM pg_class c
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relkind IN ('r', 'p') AND c.relnamespace = 'public'::regnamespace AND NOT c.relispartition
		  AND EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.oid AND x.attname = 'company_id' AND NOT x.attisdropped)
		  AND a.attname LIKE '%\_id' AND a.attname <> 'company_id'
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'f' AND a.attnum = ANY (k.conkey))
		ORDER BY 1`).Scan(ctx, &unlinked)
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range unlinked {
		if unlinkedColumns[col] == "" {
			t.Errorf("%s links a company row without a foreign key: add (company_id, %s) → parent (company_id, id), "+
				"or document it as an exception (docs/security.md, unlinkedColumns)", col, col[strings.IndexByte(col, '.')+1:])
		}
	}
	for col := range unlinkedColumns {
		if !slices.Contains(unlinked, col) {
			t.Errorf("%s is listed as a link without a foreign key, but it has one now or is gone: update the list and docs/security.md", col)
		}
	}
}

// parentRow inserts, as the owner, a row company may be linked to and
// returns its id.
type parentRow func(t *testing.T, company *testkit.Company) string

func insertParent(prefix, sql string) parentRow {
	return func(t *testing.T, co *testkit.Company) string {
		t.Helper()
		id := ids.New(prefix)
		if _, err := testkit.OwnerDB(t).ExecContext(context.Background(), sql, id, co.Company.ID); err != nil {
			t.Fatalf("parent %s: %v", prefix, err)
		}
		return id
	}
}

var (
	owner parentRow = func(_ *testing.T, co *testkit.Company) string { return co.Owner.ID }
	aSale           = insertParent("sal", `INSERT INTO sales (id, company_id, payment_status, subtotal_cents, total_cents,
		payment_plan, track_in_finance, decrement_stock, sale_date) VALUES (?0, ?1, 'pending', 0, 0, '{}', false, false, current_date)`)
	anAccount = insertParent("acc", "INSERT INTO finance_accounts (id, company_id, name) VALUES (?0, ?1, 'caixa')")
	aClient   = insertParent("cli", "INSERT INTO clients (id, company_id, name) VALUES (?0, ?1, 'Ana')")
)

// Issue 15 item 3: links between rows are same-company foreign keys, so a
// row of company A pointing at company B's row is refused by the database
// itself (foreign keys are checked without row-level security), while the
// same row pointing at A's own row is accepted.
func TestLinksAcrossCompaniesAreRefused(t *testing.T) {
	t.Parallel()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	ctx := context.Background()
	// ?0 a new id, ?1 company A, ?2 the parent's id.
	cases := []struct {
		name, key string
		parent    parentRow
		sql       string
	}{
		{"a task of A assigned to B's member", "tasks_assignee_id_fkey", owner,
			"INSERT INTO tasks (id, company_id, title, assignee_id, assignee_type) VALUES (?0, ?1, 't', ?2, 'org_member')"},
		{"an API key of A acting as B's member", "api_keys_member_id_fkey", owner,
			`INSERT INTO api_keys (id, company_id, member_id, created_by, name, secret_hash, display_prefix, permissions)
			 VALUES (?0, ?1, ?2, ?2, 'k', sha256(?0::bytea), 'ofk_x', '{}')`},
		{"a finance entry of A posted by B's sale", "financial_transactions_sale_id_fkey", aSale,
			"INSERT INTO financial_transactions (id, company_id, kind, amount_cents, transaction_date, sale_id) VALUES (?0, ?1, 'income', 1, current_date, ?2)"},
		{"a quote of A converted into B's sale", "quotes_converted_sale_id_fkey", aSale,
			"INSERT INTO quotes (id, company_id, number, client_name, converted_sale_id) VALUES (?0, ?1, 1, 'Ana', ?2)"},
		{"a sale of A posted to B's account", "sales_account_id_fkey", anAccount,
			`INSERT INTO sales (id, company_id, payment_status, subtotal_cents, total_cents, payment_plan, track_in_finance,
			 decrement_stock, sale_date, account_id) VALUES (?0, ?1, 'pending', 0, 0, '{}', false, false, current_date, ?2)`},
		{"a sale version of A naming B's client", "sale_versions_client_id_fkey", aClient,
			`WITH s AS (INSERT INTO sales (id, company_id, payment_status, subtotal_cents, total_cents, payment_plan,
			 track_in_finance, decrement_stock, sale_date) VALUES (?0, ?1, 'pending', 0, 0, '{}', false, false, current_date))
			 INSERT INTO sale_versions (id, company_id, sale_id, version, client_id, subtotal_cents, discount_cents,
			 shipping_cents, additional_costs_cents, total_cents, payment_plan) VALUES (?0, ?1, ?0, 1, ?2, 0, 0, 0, 0, 0, '{}')`},
	}
	errRollback := errors.New("rolled back")
	for _, tc := range cases {
		for _, parent := range []*testkit.Company{b, a} {
			pid := tc.parent(t, parent)
			err := tenant.Tx(ctx, testkit.DB(t), a.Company.ID, func(ctx context.Context, tx bun.Tx) error {
				// Deferred keys are checked at the statement, not at commit.
				if _, err := tx.ExecContext(ctx, "SET CONSTRAINTS ALL IMMEDIATE"); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, tc.sql, ids.New("x"), a.Company.ID, pid); err != nil {
					return err
				}
				return errRollback
			})
			var pg *pgconn.PgError
			switch {
			case parent == a && !errors.Is(err, errRollback):
				t.Errorf("%s, with A's own row instead: %v, want accepted", tc.name, err)
			case parent == b && !(errors.As(err, &pg) && pg.Code == "23503" && pg.ConstraintName == tc.key):
				t.Errorf("%s: %v, want a violation of %s", tc.name, err, tc.key)
			}
		}
	}
}

// Issue 15 item 3: the migration that adds the last same-company keys
// upgrades a database with rows: links to rows since deleted (a removed
// installment, a deleted client or order) are cleared, as the new ON
// DELETE SET NULL would have done; a link of a kind never cleared that
// points nowhere stops the migration, naming the key; links that hold
// are kept.
func TestSameCompanyLinksMigrationUpgradesExistingRows(t *testing.T) {
	t.Parallel()
	const before = "20261127000100"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, owner := testkit.ScratchDBBefore(t, "links_upgrade", before)

	seed := []string{
		"INSERT INTO companies (id, name) VALUES ('co_a', 'A'), ('co_b', 'B')",
		"INSERT INTO clients (id, company_id, name) VALUES ('cli_kept', 'co_a', 'Ana'), ('cli_b', 'co_b', 'Bia')",
		`INSERT INTO sales (id, company_id, payment_status, subtotal_cents, total_cents, payment_plan, track_in_finance,
		 decrement_stock, sale_date) VALUES ('sal_a', 'co_a', 'pending', 0, 0, '{}', true, false, current_date)`,
		`INSERT INTO sale_versions (id, company_id, sale_id, version, client_id, subtotal_cents, discount_cents, shipping_cents,
		 additional_costs_cents, total_cents, payment_plan) VALUES
		 ('sver_kept', 'co_a', 'sal_a', 1, 'cli_kept', 0, 0, 0, 0, 0, '{}'),
		 ('sver_deleted', 'co_a', 'sal_a', 2, 'cli_gone', 0, 0, 0, 0, 0, '{}'),
		 ('sver_other', 'co_a', 'sal_a', 3, 'cli_b', 0, 0, 0, 0, 0, '{}')`,
		`INSERT INTO financial_transactions (id, company_id, kind, amount_cents, transaction_date, status, sale_id, installment_id)
		 VALUES ('ftx_removed', 'co_a', 'income', 0, current_date, 'canceled', 'sal_a', 'ins_gone')`,
		`INSERT INTO financial_transactions (id, company_id, kind, amount_cents, transaction_date, service_order_id)
		 VALUES ('ftx_order', 'co_a', 'income', 1, current_date, 'so_gone')`,
		"INSERT INTO quotes (id, company_id, number, client_name, converted_order_id) VALUES ('quo_a', 'co_a', 1, 'Ana', 'so_gone')",
		// A sale is never deleted: its finance entry pointing nowhere is a finding.
		"INSERT INTO financial_transactions (id, company_id, kind, amount_cents, transaction_date, sale_id) VALUES ('ftx_bad', 'co_a', 'income', 1, current_date, 'sal_gone')",
	}
	for _, q := range seed {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.Migrate(ctx, url); err == nil || !strings.Contains(err.Error(), "financial_transactions_sale_id_fkey") {
		t.Fatalf("migrating with a finance entry of a sale that does not exist: %v, want refused naming financial_transactions_sale_id_fkey", err)
	}
	if _, err := owner.ExecContext(ctx, "DELETE FROM financial_transactions WHERE id = 'ftx_bad'"); err != nil {
		t.Fatal(err)
	}
	applied, err := db.Migrate(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied.Migrations) == 0 || !strings.HasPrefix(applied.Migrations[0], before) {
		t.Fatalf("applied %v, want %s… first", applied, before)
	}
	for q, want := range map[string]string{
		"SELECT coalesce(client_id, '-') FROM sale_versions WHERE id = 'sver_kept'":                 "cli_kept",
		"SELECT coalesce(client_id, '-') FROM sale_versions WHERE id = 'sver_deleted'":              "-",
		"SELECT coalesce(client_id, '-') FROM sale_versions WHERE id = 'sver_other'":                "-",
		"SELECT coalesce(installment_id, '-') FROM financial_transactions WHERE id = 'ftx_removed'": "-",
		"SELECT coalesce(sale_id, '-') FROM financial_transactions WHERE id = 'ftx_removed'":        "sal_a",
		"SELECT coalesce(service_order_id, '-') FROM financial_transactions WHERE id = 'ftx_order'": "-",
		"SELECT coalesce(converted_order_id, '-') FROM quotes WHERE id = 'quo_a'":                   "-",
		"SELECT count(*)::text FROM pg_class WHERE relname IN ('sale_versions', 'financial_transactions', 'quotes', " +
			"'clients', 'service_orders', 'sale_installments', 'webhook_recover_items', 'webhook_deliveries') AND relforcerowsecurity": "8",
	} {
		var got string
		if err := owner.QueryRowContext(ctx, q).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
}
