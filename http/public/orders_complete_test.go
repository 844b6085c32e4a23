package public_test

import (
	"context"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/finance"
	"oficina/tenant"
)

// Part 3.1: complete refuses (409) while a required checklist item is open;
// ticking it in the dashboard yields service_order.updated (checklist) and
// lets the order complete. Optional items never block.
func TestCompleteRefusedWhileRequiredChecklistItemOpen(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	e.Admin(t, "POST", "/service_order_checklists", map[string]any{"name": "Fim",
		"items": []map[string]any{{"description": "Assinatura", "required": true}, {"description": "Foto"}}})
	o := e.create(t, map[string]any{"client_name": "A"})
	id := o["id"].(string)
	var required string
	for _, it := range o["checklist"].([]any) {
		if m := it.(map[string]any); m["required"] == true {
			required = m["id"].(string)
		}
	}
	e.log.Next(t)
	if r := e.Do(t, "POST", "/service_orders/"+id+"/complete", nil); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Fatalf("open required item: %d %s", r.Status, r.Raw)
	}
	r := e.Admin(t, "POST", "/service_orders/"+id+"/checklist/"+required, map[string]any{"done": true})
	evs := e.log.Next(t)
	if len(evs) != 1 || evs[0].Type != "service_order.updated" || !slices.Equal(evs[0].Data.ChangedFields, []string{"checklist"}) ||
		!soSameJSON(t, evs[0].Data.Object, r.Body) {
		t.Fatalf("tick events %v", evs)
	}
	if r := e.API.Admin(t, "POST", "/companies/"+e.Co.Company.ID+"/service_orders/"+id+"/checklist/chi_unknown", map[string]any{"done": true}); r.Status != 404 {
		t.Errorf("unknown item: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "POST", "/service_orders/"+id+"/complete", nil); r.Status != 200 || r.Body["status"] != "completed" {
		t.Fatalf("complete: %d %s", r.Status, r.Raw)
	}
	if r := e.API.Admin(t, "POST", "/companies/"+e.Co.Company.ID+"/service_orders/"+id+"/checklist/"+required, map[string]any{"done": false}); r.Status != 409 {
		t.Errorf("tick on a completed order: %d %s", r.Status, r.Raw)
	}
}

// Part 3.1: complete refuses (409) while the technicians' completion order
// the company defines is not respected (support_first: every technician
// marks their part, the technician in charge last; any: every technician,
// in any order).
func TestCompleteRespectsTechnicianCompletionOrder(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	lead, s1, s2 := e.technician(t, "Lead"), e.technician(t, "S1"), e.technician(t, "S2")
	e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"technician_completion_order": "support_first"})
	id := e.create(t, map[string]any{"client_name": "A", "technician_id": lead.ID, "support_technician_ids": []string{s1.ID, s2.ID}})["id"].(string)
	mark := func(tech string, done bool) {
		t.Helper()
		e.Admin(t, "POST", "/service_orders/"+id+"/technician_completions", map[string]any{"technician_id": tech, "done": done})
	}
	complete := func() int {
		t.Helper()
		return e.Do(t, "POST", "/service_orders/"+id+"/complete", nil).Status
	}
	e.log.Next(t)
	mark(s1.ID, true)
	if evs := e.log.Next(t); len(evs) != 1 || evs[0].Type != "service_order.updated" ||
		!slices.Equal(evs[0].Data.ChangedFields, []string{"technician_completions"}) {
		t.Fatalf("mark events %v", evs)
	}
	mark(s1.ID, true) // marking twice changes nothing
	if evs := e.log.Next(t); len(evs) != 0 {
		t.Fatalf("repeated mark events %v", testkit.Types(evs))
	}
	if s := complete(); s != 409 {
		t.Fatalf("missing marks: %d", s)
	}
	mark(lead.ID, true)
	mark(s2.ID, true) // after the technician in charge: order not respected
	if s := complete(); s != 409 {
		t.Fatalf("in charge before support: %d", s)
	}
	if r := e.API.Admin(t, "POST", "/companies/"+e.Co.Company.ID+"/service_orders/"+id+"/technician_completions",
		map[string]any{"technician_id": e.Co.Owner.ID, "done": true}); r.Status != 422 {
		t.Errorf("not on the order: %d %s", r.Status, r.Raw)
	}
	mark(lead.ID, false)
	mark(lead.ID, true)
	e.log.Next(t)
	if s := complete(); s != 200 {
		t.Fatalf("order respected: %d", s)
	}

	e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"technician_completion_order": "any"})
	id = e.create(t, map[string]any{"client_name": "B", "technician_id": lead.ID, "support_technician_ids": []string{s1.ID}})["id"].(string)
	mark(lead.ID, true)
	if s := complete(); s != 409 {
		t.Fatalf("any, support missing: %d", s)
	}
	mark(s1.ID, true)
	if s := complete(); s != 200 {
		t.Fatalf("any, all marked: %d", s)
	}
}

// Parts 4.3 and 5.4: link_financial_transaction needs finance:create (403
// and nothing saved without it) and posts the order's total as revenue,
// with financial_transaction.created; completing again after a reopen does
// not post twice.
func TestCompleteLinkFinancialTransaction(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	withFinance := e.Co.OwnerKey(t, append([]string{"finance:create"}, orderPerms...)...)
	viewer := e.Co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember),
		Permissions: &tenant.MemberPermissions{"service_orders": {"read", "update"}}})
	memberKey := e.Co.Key(t, viewer, append([]string{"finance:create"}, orderPerms...)...).Secret
	var acc *finance.AccountRow
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		acc, err = finance.CreateAccount(ctx, tx, e.Co.Company.ID, "Caixa", true, e.Co.Company.CreatedAt)
		return err
	})
	o := e.create(t, map[string]any{"client_name": "Ana", "items": []map[string]any{
		{"description": "Serviço", "quantity": 1, "unit_price_cents": 20000, "total_cents": 20000}}, "discount_cents": 500})
	path := "/service_orders/" + o["id"].(string) + "/complete"
	e.log.Next(t)
	link := map[string]any{"link_financial_transaction": true}
	if r := e.Do(t, "POST", path, link); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Fatalf("without finance:create: %d %s", r.Status, r.Raw)
	}
	if r := e.API.Do(t, httpkit.Req{Method: "POST", Path: path, Key: memberKey, Body: link}); r.Status != 403 || r.ErrorCode() != "member_permission_denied" {
		t.Fatalf("member without finance: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "GET", "/service_orders/"+o["id"].(string), nil); r.Body["status"] != "pending" || len(e.log.Next(t)) != 0 || e.count(t, "financial_transactions") != 0 {
		t.Fatalf("refused completion saved something: %s", r.Raw)
	}
	r := e.API.Do(t, httpkit.Req{Method: "POST", Path: path, Key: withFinance, Body: link})
	if r.Status != 200 || r.Body["status"] != "completed" {
		t.Fatalf("complete: %d %s", r.Status, r.Raw)
	}
	evs := e.log.Next(t)
	if !slices.Equal(testkit.Types(evs), []string{"financial_transaction.created", "service_order.status_changed", "service_order.updated"}) {
		t.Fatalf("events %v", testkit.Types(evs))
	}
	ft := evs[0].Data.Object
	if ft["kind"] != "income" || ft["amount_cents"] != 19500.0 || ft["service_order_id"] != o["id"] || ft["account_id"] != acc.ID {
		t.Errorf("revenue %v", ft)
	}
	e.Do(t, "POST", "/service_orders/"+o["id"].(string)+"/status", map[string]any{"status": "in_progress"})
	if r := e.API.Do(t, httpkit.Req{Method: "POST", Path: path, Key: withFinance, Body: link}); r.Status != 200 {
		t.Fatalf("complete again: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "financial_transactions"); n != 1 {
		t.Errorf("%d revenue entries", n)
	}
	// Without the switch no finance permission is needed and nothing is posted.
	p := e.create(t, map[string]any{"client_name": "B", "items": []map[string]any{
		{"description": "x", "quantity": 1, "unit_price_cents": 1, "total_cents": 1}}})
	if r := e.Do(t, "POST", "/service_orders/"+p["id"].(string)+"/complete", map[string]any{"link_financial_transaction": false}); r.Status != 200 {
		t.Fatalf("complete without link: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "financial_transactions"); n != 1 {
		t.Errorf("%d revenue entries", n)
	}
}
