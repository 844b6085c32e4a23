package db_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/ids"
	"oficina/tenant"
)

func sqlState(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code
	}
	return ""
}

// The cross-company calls, with arguments that name another company.
var crossCompanyCalls = []string{
	"SELECT oficina_idempotency_expired(now(), 1)",
	"SELECT oficina_unpublished_companies(now(), 1)",
	"SELECT oficina_expired_companies(now(), 1)",
	"SELECT oficina_mail_companies(now(), 1)",
	"SELECT oficina_sales_overdue_companies(now())",
	"SELECT oficina_secret_companies(NULL, '', 1)",
	"SELECT oficina_dispatch_views(ARRAY['co_other'], ARRAY['dlv_x'], ARRAY['we_x'])",
	"SELECT oficina_dispatch_succeeded(ARRAY['co_other'], ARRAY['att_x'], ARRAY['dlv_x'], ARRAY['we_x'], ARRAY[now()], ARRAY[200], now())",
	`SELECT oficina_attempt_details('[{"company": "co_other", "delivery": "dlv_x", "started": "2026-01-01T00:00:00Z"}]')`,
	"SELECT oficina_recover_companies(1)",
}

// Issue 15 item 3: the request role cannot call the functions that cross
// companies (called inside company A's transaction with B's id they
// returned B's data and left the transaction scoped to B); the worker role
// can.
func TestOnlyTheWorkerRoleCallsCrossCompanyFunctions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, call := range crossCompanyCalls {
		_, err := testkit.DB(t).ExecContext(ctx, call)
		if sqlState(err) != "42501" {
			t.Errorf("as the app role, %s: %v, want permission denied", call, err)
		}
		if err := testkit.WorkerDB(t).RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, call)
			return err
		}); err != nil {
			t.Errorf("as the worker role, %s: %v", call, err)
		}
	}
}

// Issue 15 item 3: a cross-company function gives the caller's transaction
// its company back: the statements after it read the caller's rows only.
func TestCrossCompanyFunctionsRestoreTheCallersCompany(t *testing.T) {
	t.Parallel()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	err := tenant.Tx(context.Background(), testkit.WorkerDB(t), a.Company.ID, func(ctx context.Context, tx bun.Tx) error {
		for _, call := range []string{
			"SELECT oficina_dispatch_views(ARRAY[?], ARRAY['dlv_x'], ARRAY['we_x'])",
			"SELECT oficina_dispatch_succeeded(ARRAY[?], ARRAY['att_x'], ARRAY['dlv_x'], ARRAY['we_x'], ARRAY[now()], ARRAY[200], now())",
			`SELECT oficina_attempt_details(jsonb_build_array(jsonb_build_object('company', ?::text, 'delivery', 'dlv_x', 'started', now())))`,
		} {
			if _, err := tx.ExecContext(ctx, call, b.Company.ID); err != nil {
				return err
			}
			var scoped string
			if err := tx.QueryRowContext(ctx, "SELECT current_setting('app.company_id', true)").Scan(&scoped); err != nil {
				return err
			}
			if scoped != a.Company.ID {
				t.Errorf("after %s the transaction is scoped to %q, want %q", call, scoped, a.Company.ID)
			}
			var members []string
			if err := tx.NewSelect().Table("members").Column("company_id").Scan(ctx, &members); err != nil {
				return err
			}
			for _, c := range members {
				if c != a.Company.ID {
					t.Errorf("after %s the transaction reads company %s's members", call, c)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 15 item 3: the app roles create no temporary table, which an
// unqualified name would otherwise find first.
func TestAppRolesCreateNoTemporaryTables(t *testing.T) {
	t.Parallel()
	for role, pool := range map[string]*bun.DB{"app": testkit.DB(t), "worker": testkit.WorkerDB(t)} {
		err := pool.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, "CREATE TEMP TABLE api_keys (company_id text, secret_hash bytea)")
			return err
		})
		if sqlState(err) != "42501" {
			t.Errorf("as the %s role, CREATE TEMP TABLE: %v, want permission denied", role, err)
		}
	}
}

// Issue 15 item 3: SECURITY DEFINER functions belong to a role that can
// neither log in nor bypass row-level security, never the superuser, and
// search pg_temp last.
func TestDefinerFunctionsBelongToANologinOwnerAndSearchPgTempLast(t *testing.T) {
	t.Parallel()
	var rows []struct {
		Name   string   `bun:"name"`
		Owner  string   `bun:"owner"`
		Login  bool     `bun:"login"`
		Super  bool     `bun:"super"`
		Bypass bool     `bun:"bypass"`
		Config []string `bun:"config,array"`
	}
	err := testkit.OwnerDB(t).NewRaw(`SELECT p.proname AS name, r.rolname AS owner, r.rolcanlogin AS login, r.rolsuper AS super,
		r.rolbypassrls AS bypass, coalesce(p.proconfig, '{}') AS config
		FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'public' AND p.prosecdef`).Scan(context.Background(), &rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no SECURITY DEFINER function found")
	}
	for _, r := range rows {
		if r.Login || r.Super || r.Bypass {
			t.Errorf("%s belongs to %s (login %v, superuser %v, bypassrls %v)", r.Name, r.Owner, r.Login, r.Super, r.Bypass)
		}
		if !strings.Contains(strings.Join(r.Config, ","), "search_path=public, pg_temp") {
			t.Errorf("%s: %v, want search_path=public, pg_temp", r.Name, r.Config)
		}
	}
}

// Issue 15 item 3: a temporary table named like a real one cannot change
// what the key lookup answers (the definer searches pg_temp last). The
// owner, who may create temporary tables, plays the attacker.
func TestATemporaryTableCannotSpoofTheKeyLookup(t *testing.T) {
	t.Parallel()
	hash := sha256.Sum256([]byte("ofk_spoof_" + ids.New("x")))
	err := testkit.OwnerDB(t).RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "CREATE TEMP TABLE api_keys (company_id text, secret_hash bytea) ON COMMIT DROP"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO pg_temp.api_keys VALUES ('co_spoofed', ?)", hash[:]); err != nil {
			return err
		}
		var company *string
		if err := tx.QueryRowContext(ctx, "SELECT oficina_key_company(?)", hash[:]).Scan(&company); err != nil {
			return err
		}
		if company != nil {
			t.Errorf("the key lookup answered %q from a temporary table", *company)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 15 item 3: links between rows are same-company foreign keys, so a
// row of company A pointing at company B's row is refused by the database
// itself (foreign keys are checked without row-level security).
func TestLinksAcrossCompaniesAreRefused(t *testing.T) {
	t.Parallel()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	ctx := context.Background()
	cases := []struct{ name, sql string }{
		{"a task of A assigned to B's member", "INSERT INTO tasks (id, company_id, title, assignee_id, assignee_type) VALUES (?, ?, 't', ?, 'org_member')"},
		{"an API key of A acting as B's member", "INSERT INTO api_keys (id, company_id, member_id, created_by, name, secret_hash, display_prefix, permissions) VALUES (?, ?, ?, ?, 'k', ?, 'ofk_x', '{}')"},
	}
	for _, tc := range cases {
		err := tenant.Tx(ctx, testkit.DB(t), a.Company.ID, func(ctx context.Context, tx bun.Tx) error {
			args := []any{ids.New("x"), a.Company.ID, b.Owner.ID}
			if strings.Contains(tc.sql, "api_keys") {
				h := sha256.Sum256([]byte(ids.New("k")))
				args = append(args, b.Owner.ID, h[:])
			}
			_, err := tx.ExecContext(ctx, tc.sql, args...)
			return err
		})
		if sqlState(err) != "23503" {
			t.Errorf("%s: %v, want a foreign key violation", tc.name, err)
		}
	}
}

// Issue 15 item 3: every foreign key between two company tables is a
// same-company key, so a later migration cannot bring back a global one.
func TestEveryLinkBetweenCompanyTablesIsSameCompany(t *testing.T) {
	t.Parallel()
	var bad []string
	err := testkit.OwnerDB(t).NewRaw(`SELECT c.conname FROM pg_constraint c
		WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
		  AND EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.conrelid AND x.attname = 'company_id')
		  AND EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.confrelid AND x.attname = 'company_id')
		  AND NOT (SELECT bool_or(a.attname = 'company_id') FROM pg_attribute a
		            WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey))`).Scan(context.Background(), &bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range bad {
		t.Errorf("%s links two companies' tables without company_id", name)
	}
}
