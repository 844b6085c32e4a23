package public_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// orderPerms are the permissions of a key that works with orders.
var orderPerms = []string{"service_orders:read", "service_orders:create", "service_orders:update"}

// orderEnv is a company with an owner key holding perms, and a reader of
// its events.
type orderEnv struct {
	*httpkit.Env
	log *testkit.EventLog
}

func newOrderEnv(t *testing.T, perms ...string) *orderEnv {
	t.Helper()
	e := httpkit.NewEnv(t, httpkit.APIOptions{}, perms...)
	return &orderEnv{Env: e, log: e.Co.Events()}
}

// create posts an order and fails the test unless it is 201.
func (e *orderEnv) create(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do(t, "POST", "/service_orders", body)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	return r.Body
}

func (e *orderEnv) technician(t *testing.T, name string) *tenant.Member {
	t.Helper()
	return e.Co.Member(t, tenant.MemberInput{Name: testkit.Ptr(name), Type: testkit.Ptr(tenant.TypeTechnician)})
}

// count runs a count query in the company transaction.
func (e *orderEnv) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Table(table).ColumnExpr("count(*)").Scan(ctx, &n)
	})
	return n
}

// soSameJSON reports whether two decoded JSON values are equal.
func soSameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// soFieldErrors returns errors[] of a 422 as "param:code" strings, sorted.
func soFieldErrors(r *httpkit.Response) []string {
	e, _ := r.Body["error"].(map[string]any)
	list, _ := e["errors"].([]any)
	var out []string
	for _, it := range list {
		m, _ := it.(map[string]any)
		out = append(out, m["param"].(string)+":"+m["code"].(string))
	}
	slices.Sort(out)
	return out
}
