package public_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/streams"
	"oficina/tenant"
)

// orderPerms are the permissions of a key that works with orders.
var orderPerms = []string{"service_orders:read", "service_orders:create", "service_orders:update"}

// orderEnv is a company with an owner key holding perms.
type orderEnv struct {
	api *testkit.API
	co  *testkit.Company
	key string
	log *soEventLog
}

func newOrderEnv(t *testing.T, perms ...string) *orderEnv {
	t.Helper()
	api := testkit.NewAPI(t, testkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	return &orderEnv{api: api, co: co, key: co.OwnerKey(t, perms...), log: &soEventLog{co: co, seen: map[string]bool{}}}
}

func (e *orderEnv) do(t *testing.T, method, path string, body any) *testkit.Response {
	t.Helper()
	return e.api.Do(t, testkit.Req{Method: method, Path: path, Key: e.key, Body: body})
}

func (e *orderEnv) admin(t *testing.T, method, path string, body any) *testkit.Response {
	t.Helper()
	r := e.api.Admin(t, method, "/companies/"+e.co.Company.ID+path, body)
	if r.Status >= 300 {
		t.Fatalf("admin %s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r
}

// create posts an order and fails the test unless it is 201.
func (e *orderEnv) create(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := e.do(t, "POST", "/service_orders", body)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	return r.Body
}

func (e *orderEnv) technician(t *testing.T, name string) *tenant.Member {
	t.Helper()
	return e.co.Member(t, tenant.MemberInput{Name: testkit.Ptr(name), Type: testkit.Ptr(tenant.TypeTechnician)})
}

// count runs a count query in the company transaction.
func (e *orderEnv) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Table(table).ColumnExpr("count(*)").Scan(ctx, &n)
	})
	return n
}

// soEvent is a recorded envelope.
type soEvent struct {
	Type string `json:"type"`
	Data struct {
		Object        map[string]any `json:"object"`
		ChangedFields []string       `json:"changed_fields"`
	} `json:"data"`
}

// soEventLog reads the company's event_outbox rows not seen before, so each
// write's events can be checked on their own.
type soEventLog struct {
	co   *testkit.Company
	seen map[string]bool
}

func (l *soEventLog) next(t *testing.T) []soEvent {
	t.Helper()
	var rows []streams.OutboxEvent
	l.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&rows).Order("created_at", "type").Scan(ctx)
	})
	var out []soEvent
	for _, r := range rows {
		if l.seen[r.ID] {
			continue
		}
		l.seen[r.ID] = true
		var ev soEvent
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	slices.SortFunc(out, func(a, b soEvent) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// soTypes lists the types of events, sorted.
func soTypes(evs []soEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
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
func soFieldErrors(r *testkit.Response) []string {
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
