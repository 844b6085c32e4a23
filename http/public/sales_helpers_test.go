package public_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
)

// salePerms are the permissions of a key that works with sales (no finance).
var salePerms = []string{"sales:read", "sales:create", "sales:update"}

// financePerms are all finance permissions.
var financePerms = []string{"finance:read", "finance:create", "finance:update"}

// saleEnv is a company with an owner key holding sales and finance
// permissions, and a reader of its events.
type saleEnv struct {
	*httpkit.Env
	log *testkit.EventLog
}

func newSaleEnv(t *testing.T) *saleEnv {
	t.Helper()
	e := httpkit.NewEnv(t, httpkit.APIOptions{}, append(slices.Clone(salePerms), financePerms...)...)
	return &saleEnv{Env: e, log: e.Co.Events()}
}

// admin calls the admin API for the company, fails the test on error and
// returns the body.
func (e *saleEnv) admin(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	return e.Admin(t, method, path, body).Body
}

// product creates a product in the dashboard.
func (e *saleEnv) product(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	return e.admin(t, "POST", "/products", body)
}

// account creates a finance account.
func (e *saleEnv) account(t *testing.T, name string, isDefault bool) string {
	t.Helper()
	return e.admin(t, "POST", "/finance_accounts", map[string]any{"name": name, "is_default": isDefault})["id"].(string)
}

// client creates a client record.
func (e *saleEnv) client(t *testing.T) string {
	t.Helper()
	return e.admin(t, "POST", "/clients", map[string]any{"name": "Cliente"})["id"].(string)
}

// sale posts a sale and fails the test unless it is 201.
func (e *saleEnv) sale(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do(t, "POST", "/sales", body)
	if r.Status != 201 {
		t.Fatalf("create sale: %d %s", r.Status, r.Raw)
	}
	return r.Body
}

// ok sends a request and fails the test unless it is 200.
func (e *saleEnv) ok(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	r := e.Do(t, method, path, body)
	if r.Status != 200 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r.Body
}

// count runs a count query in the company transaction.
func (e *saleEnv) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw(query, args...).Scan(ctx, &n)
	})
	return n
}

// events returns the events not read before, sorted by type.
func (e *saleEnv) events(t *testing.T) []testkit.Event {
	t.Helper()
	return e.log.Next(t)
}

// rawEvents returns the stored bodies of the company's events of a type.
func (e *saleEnv) rawEvents(t *testing.T, typ string) []string {
	t.Helper()
	var rows []streams.OutboxEvent
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&rows).Where("type = ?", typ).Scan(ctx)
	})
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r.Body)
	}
	return out
}

// installmentsBody builds a plan's installments.
func installmentsBody(dueAmounts ...any) []map[string]any {
	var out []map[string]any
	for i := 0; i+1 < len(dueAmounts); i += 2 {
		out = append(out, map[string]any{"due_date": dueAmounts[i], "amount_cents": dueAmounts[i+1]})
	}
	return out
}

// customSale is a body with one custom item of total cents and a plan,
// dated 2026-01-01.
func customSale(total int64, plan map[string]any) map[string]any {
	return map[string]any{"items": []map[string]any{{"type": "custom", "name": "Serviço", "unit_price_cents": total}},
		"payment_plan": plan, "sale_date": "2026-01-01"}
}

// saleNum reads a JSON number as int64.
func saleNum(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// saleList returns a JSON array field.
func saleList(m map[string]any, key string) []map[string]any {
	raw, _ := m[key].([]any)
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i], _ = x.(map[string]any)
	}
	return out
}

// saleFieldErrors returns errors[] of a 422 as "param:code", sorted.
func saleFieldErrors(r *httpkit.Response) string {
	e, _ := r.Body["error"].(map[string]any)
	items, _ := e["errors"].([]any)
	var out []string
	for _, it := range items {
		m := it.(map[string]any)
		out = append(out, m["param"].(string)+":"+m["code"].(string))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// sameObject reports whether two JSON objects are equal.
func sameObject(t *testing.T, a, b any) bool {
	t.Helper()
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
