package public_test

import (
	"context"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/quotes"
	"oficina/tenant"
)

// Parts 4.3, 5.4 and 7: from_quote converts an approved quote once
// (service_orders:create, quotes:read, member access to quotes, and
// appointments:create with an appointment); not approved or already
// converted is 409; the new order goes through the whole creation path.
func TestServiceOrderFromQuote(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, append([]string{"quotes:read"}, orderPerms...)...)
	cl := e.Admin(t, "POST", "/clients", map[string]any{"name": "Ana"}).Body["id"]
	e.Admin(t, "POST", "/service_order_checklists", map[string]any{"name": "Padrão", "items": []map[string]any{{"description": "EPI"}}})
	quote := func(status string) string {
		return e.Admin(t, "POST", "/quotes", map[string]any{"client_id": cl, "client_name": "Ana Souza", "status": status,
			"items":          []map[string]any{{"description": "Instalação", "quantity": 2, "unit_price_cents": 5000, "total_cents": 9000}},
			"discount_cents": 1000, "additional_costs_cents": 300}).Body["id"].(string)
	}
	approved, draft := quote("approved"), quote("draft")
	e.create(t, map[string]any{"client_name": "Primeira"})
	e.log.Next(t)

	noQuotes := e.Co.OwnerKey(t, orderPerms...)
	member := e.Co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember),
		Permissions: &tenant.MemberPermissions{"service_orders": {"read", "create"}}})
	memberKey := e.Co.Key(t, member, append([]string{"quotes:read"}, orderPerms...)...).Secret
	for name, tc := range map[string]struct {
		key  string
		body map[string]any
		code string
	}{
		"without quotes:read":                {noQuotes, map[string]any{"quote_id": approved}, "permission_missing"},
		"member without access to quotes":    {memberKey, map[string]any{"quote_id": approved}, "member_permission_denied"},
		"appointment without its permission": {e.Key, map[string]any{"quote_id": approved, "create_appointment": true, "scheduled_start": "2030-01-01T10:00:00Z"}, "permission_missing"},
	} {
		r := e.API.Do(t, httpkit.Req{Method: "POST", Path: "/service_orders/from_quote", Key: tc.key, Body: tc.body})
		if r.Status != 403 || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	if r := e.Do(t, "POST", "/service_orders/from_quote", map[string]any{"quote_id": draft}); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Errorf("draft quote: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "POST", "/service_orders/from_quote", map[string]any{}); r.Status != 422 ||
		!slices.Equal(soFieldErrors(r), []string{"quote_id:required"}) {
		t.Errorf("no quote_id: %d %s", r.Status, r.Raw)
	}
	other := newOrderEnv(t, append([]string{"quotes:read"}, orderPerms...)...)
	if r := other.Do(t, "POST", "/service_orders/from_quote", map[string]any{"quote_id": approved}); r.Status != 404 {
		t.Errorf("another company's quote: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "service_orders"); n != 1 || len(e.log.Next(t)) != 0 {
		t.Fatalf("refusals saved %d orders", n)
	}

	// without scheduled_start create_appointment needs nothing and creates nothing
	r := e.Do(t, "POST", "/service_orders/from_quote", map[string]any{"quote_id": approved, "service_address": "Rua A, 1",
		"priority": "urgent", "create_appointment": true})
	if r.Status != 201 {
		t.Fatalf("convert: %d %s", r.Status, r.Raw)
	}
	o := r.Body
	if o["quote_id"] != approved || o["client_id"] != cl || o["client_name"] != "Ana Souza" || o["number"] != 2.0 ||
		o["subtotal_cents"] != 9000.0 || o["total_cents"] != 8300.0 || o["status"] != "pending" || o["priority"] != "urgent" ||
		o["service_address"] != "Rua A, 1" || len(o["checklist"].([]any)) != 1 || o["appointment_id"] != nil {
		t.Errorf("order %v", o)
	}
	if it := o["items"].([]any)[0].(map[string]any); it["total_cents"] != 9000.0 || it["quantity"] != 2.0 {
		t.Errorf("items %v", it)
	}
	if evs := e.log.Next(t); len(evs) != 1 || evs[0].Type != "service_order.created" || !soSameJSON(t, evs[0].Data.Object, o) {
		t.Errorf("events %v", evs)
	}
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		q, err := quotes.Get(ctx, tx, approved, false)
		if err == nil && (q.ConvertedOrderID == nil || *q.ConvertedOrderID != o["id"] || q.Status != quotes.StatusApproved) {
			t.Errorf("quote %+v", q)
		}
		return err
	})
	if r := e.Do(t, "POST", "/service_orders/from_quote", map[string]any{"quote_id": approved}); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Errorf("second conversion: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "service_orders"); n != 2 {
		t.Errorf("%d orders", n)
	}
}
