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

// crossCompanyCalls calls each cross-company function with arguments that
// name another company (the ? is that company's id where the function
// takes one). Every such function in the catalogue needs its call here.
var crossCompanyCalls = map[string]string{
	"oficina_idempotency_expired": "SELECT oficina_idempotency_expired(now(), 1)",
	"oficina_backlog_companies":   "SELECT oficina_backlog_companies(now(), 1)",
	// Publishers silent since forever: none, so no other test's are
	// handed over.
	"oficina_publishers_lost":         "SELECT oficina_publishers_lost('-infinity', '0')",
	"oficina_expired_companies":       "SELECT oficina_expired_companies(now(), 1)",
	"oficina_mail_companies":          "SELECT oficina_mail_companies(now(), 1)",
	"oficina_sales_overdue_companies": "SELECT oficina_sales_overdue_companies(now())",
	"oficina_secret_companies":        "SELECT oficina_secret_companies(NULL, '', 1)",
	"oficina_recover_companies":       "SELECT oficina_recover_companies(1)",
	// Company ids only, of endpoints whose certificate expires before then.
	"oficina_expiring_certificate_companies": "SELECT * FROM oficina_expiring_certificate_companies(now())",
	"oficina_dispatch_views":                 "SELECT oficina_dispatch_views(ARRAY[?], ARRAY['dlv_x'], ARRAY['we_x'])",
	"oficina_dispatch_record": `SELECT oficina_dispatch_record(ARRAY[?], ARRAY['we_x'], ARRAY['dlv_x'], ARRAY['failed'], ARRAY['wha_x'],
		ARRAY[now()], ARRAY[500], ARRAY[NULL::text], ARRAY['{}'], ARRAY[now()], ARRAY[NULL::text], now(), '72 hours')`,
	// The /metrics figures: counts across companies, never a row.
	"oficina_outbox_lag":       "SELECT * FROM oficina_outbox_lag()",
	"oficina_retries_past_due": "SELECT * FROM oficina_retries_past_due(now())",
	"oficina_mail_backlog":     "SELECT oficina_mail_backlog()",
	// The log's day partitions: tables, never a row (no retention here, so
	// nothing of the shared database is dropped).
	"oficina_log_partitions": "SELECT * FROM oficina_log_partitions(now(), 0, NULL)",
}

// requestDoors are the functions the request role may call although they
// run as their definer or set the transaction's company, each for a reason.
var requestDoors = map[string]string{
	"oficina_key_company":    "the key lookup: a key hash to its company, before any company is known",
	"oficina_portal_company": "the portal's lookup: a link or session hash to its company",
	"oficina_sale_get":       "scopes a transaction that has no company, or the same one; refuses another",
	"oficina_publisher_beat": "a publishing process's heartbeat: its own row of publishers, no company's data",
}

// catalogueFunc is a function of the catalogue that crosses companies.
type catalogueFunc struct {
	Name        string `bun:"name"`
	NullCall    string `bun:"null_call"` // called with NULL of each argument's type
	SetsCompany bool   `bun:"sets_company"`
}

// setsCompany matches a function body that sets app.company_id, or the
// worker's batch scope app.company_ids (decision 0031).
const setsCompany = `p.prosrc ~ 'set_config\s*\(\s*''app\.company_ids?'''`

// crossCompanyFunctions reads from the catalogue every function of public
// that runs as its definer, sets app.company_id, or is granted to the
// worker role by name, but the request role's doors: a function added by a
// later migration is covered without editing a list here.
func crossCompanyFunctions(t *testing.T) []catalogueFunc {
	t.Helper()
	var fns []catalogueFunc
	err := testkit.OwnerDB(t).NewRaw(`SELECT p.proname AS name,
		  format('SELECT %s(%s)', p.oid::regproc, (SELECT coalesce(string_agg('NULL::' || format_type(a.t, NULL), ', ' ORDER BY a.o), '')
		                                         FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, o))) AS null_call,
		  `+setsCompany+` AS sets_company
		FROM pg_proc p
		WHERE p.pronamespace = 'public'::regnamespace
		  AND (p.prosecdef OR `+setsCompany+`
		       OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) x WHERE x.grantee = 'oficina_worker'::regrole))
		ORDER BY 1`).Scan(context.Background(), &fns)
	if err != nil {
		t.Fatal(err)
	}
	var out []catalogueFunc
	seen := map[string]bool{}
	for _, f := range fns {
		seen[f.Name] = true
		if requestDoors[f.Name] == "" {
			out = append(out, f)
		}
	}
	for name := range requestDoors {
		if !seen[name] {
			t.Errorf("request door %s is no longer a definer or company-setting function of the catalogue: update requestDoors", name)
		}
	}
	if len(out) == 0 {
		t.Fatal("no cross-company function found in the catalogue")
	}
	return out
}

// exec runs call, with other as the id of another company where call
// takes one.
func exec(ctx context.Context, idb bun.IDB, call, other string) error {
	var args []any
	if strings.Contains(call, "?") {
		args = append(args, other)
	}
	_, err := idb.ExecContext(ctx, call, args...)
	return err
}

// Issue 15 item 3: the request role cannot call the functions that cross
// companies (called inside company A's transaction with B's id they
// returned B's data and left the transaction scoped to B); the worker role
// can. The functions come from the catalogue, so a new one is covered.
func TestOnlyTheWorkerRoleCallsCrossCompanyFunctions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other := testkit.NewCompany(t, tenant.CompanyInput{}).Company.ID
	covered := map[string]bool{}
	for _, f := range crossCompanyFunctions(t) {
		covered[f.Name] = true
		if _, err := testkit.DB(t).ExecContext(ctx, f.NullCall); sqlState(err) != "42501" {
			t.Errorf("as the app role, %s: %v, want permission denied", f.NullCall, err)
		}
		call, ok := crossCompanyCalls[f.Name]
		if !ok {
			t.Errorf("%s crosses companies (definer, sets the company or granted to the worker) but has no call in "+
				"crossCompanyCalls: add one naming another company, or make it a request door with its reason", f.Name)
			continue
		}
		if err := testkit.WorkerDB(t).RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return exec(ctx, tx, call, other)
		}); err != nil {
			t.Errorf("as the worker role, %s: %v", call, err)
		}
	}
	for name := range crossCompanyCalls {
		if !covered[name] {
			t.Errorf("crossCompanyCalls has %s, which the catalogue no longer has as a cross-company function", name)
		}
	}
}

// Issue 15 item 3: a cross-company function gives the caller's transaction
// its company back: the statements after it read the caller's rows only.
// Every function of the catalogue that sets the company is tried.
func TestCrossCompanyFunctionsRestoreTheCallersCompany(t *testing.T) {
	t.Parallel()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	var calls []string
	for _, f := range crossCompanyFunctions(t) {
		if !f.SetsCompany {
			continue
		}
		call := crossCompanyCalls[f.Name]
		if !strings.Contains(call, "?") {
			t.Errorf("%s sets the company: its call in crossCompanyCalls must name another company (?)", f.Name)
			continue
		}
		calls = append(calls, call)
	}
	if len(calls) == 0 {
		t.Fatal("no function of the catalogue sets the company: the test proves nothing")
	}
	err := tenant.Tx(context.Background(), testkit.WorkerDB(t), a.Company.ID, func(ctx context.Context, tx bun.Tx) error {
		for _, call := range calls {
			if err := exec(ctx, tx, call, b.Company.ID); err != nil {
				return err
			}
			var scoped, batch string
			if err := tx.QueryRowContext(ctx, "SELECT current_setting('app.company_id', true), coalesce(current_setting('app.company_ids', true), '')").
				Scan(&scoped, &batch); err != nil {
				return err
			}
			if scoped != a.Company.ID || batch != "" {
				t.Errorf("after %s the transaction is scoped to %q and batch %q, want %q and none", call, scoped, batch, a.Company.ID)
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

// Issue 25 / decision 0027: a partition of the log has no row-level
// security of its own, so neither the request role nor the worker role
// may read one directly: the parents, whose policies hold, are the only
// way to the log's rows.
func TestTheLogsPartitionsAreReachableOnlyThroughTheirParents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var parts []string
	if err := testkit.OwnerDB(t).NewRaw(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent::regclass::text IN ('event_outbox', 'webhook_deliveries', 'webhook_attempts') AND c.relkind = 'r'`).
		Scan(ctx, &parts); err != nil {
		t.Fatal(err)
	}
	if len(parts) < 3 {
		t.Fatalf("partitions %v, want at least the three defaults", parts)
	}
	for _, p := range parts {
		for role, pool := range map[string]*bun.DB{"app": testkit.DB(t), "worker": testkit.WorkerDB(t)} {
			if _, err := pool.ExecContext(ctx, "SELECT 1 FROM "+p+" LIMIT 1"); sqlState(err) != "42501" {
				t.Errorf("as the %s role, reading %s directly: %v, want permission denied", role, p, err)
			}
		}
	}
}

// Decision 0031: a worker's batch scope (app.company_ids, which the
// dispatcher's cycle functions set) reaches the companies it lists and no
// other, and means nothing to the request role.
func TestTheWorkerBatchScopeReachesOnlyItsCompanies(t *testing.T) {
	t.Parallel()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	c := testkit.NewCompany(t, tenant.CompanyInput{})
	read := func(idb *bun.DB, scope string) map[string]bool {
		seen := map[string]bool{}
		err := idb.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_ids', ?, true)", scope); err != nil {
				return err
			}
			var companies []string
			if err := tx.NewSelect().Table("members").Column("company_id").
				Where("company_id IN (?, ?, ?)", a.Company.ID, b.Company.ID, c.Company.ID).Scan(ctx, &companies); err != nil {
				return err
			}
			for _, co := range companies {
				seen[co] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return seen
	}
	scope := a.Company.ID + "," + b.Company.ID
	if seen := read(testkit.WorkerDB(t), scope); !seen[a.Company.ID] || !seen[b.Company.ID] || seen[c.Company.ID] {
		t.Errorf("the worker scoped to %s reads the members of %v", scope, seen)
	}
	if seen := read(testkit.DB(t), scope); len(seen) != 0 {
		t.Errorf("the request role with a batch scope reads the members of %v, want none", seen)
	}
}
