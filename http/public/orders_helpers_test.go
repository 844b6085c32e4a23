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
	"oficina/tenant"
)

// orderPerms are the permissions of a key that works with orders.
var orderPerms = []string{"service_orders:read", "service_orders:create", "service_orders:update"}

// orderEnv is a company with an owner key holding perms, and a reader of
// its events.
type orderEnv struct {
	*httpkit.Env
	log *soEventLog
}

func newOrderEnv(t *testing.T, perms ...string) *orderEnv {
	t.Helper()
	e := httpkit.NewEnv(t, httpkit.APIOptions{}, perms...)
	return &orderEnv{Env: e, log: &soEventLog{co: e.Co, seen: map[string]bool{}}}
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
