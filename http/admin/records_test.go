package admin_test

import (
	"slices"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
)

// Spec 6.3 rules 1–3 and 6.4: a dashboard task change records task.updated
// with the fields it changed (started_at stamped by in_progress; no
// updated_at); a change that changes nothing records nothing; null on a
// field that cannot be cleared is 422; a delete records task.deleted with
// the task as it was.
func TestDashboardTaskUpdateAndDeleteRecordEvents(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	key := d.co.OwnerKey(t, "leads:create", "tasks:create")
	lc := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: map[string]any{"name": "Lead", "email": "lead@example.com"}})
	if lc.Status != 201 {
		t.Fatalf("lead: %d %s", lc.Status, lc.Raw)
	}
	id := lc.Body["task"].(map[string]any)["id"].(string)
	d.events(t)

	u := d.ok(t, 200, "PATCH", "/tasks/"+id, map[string]any{"title": "Call back", "status": "in_progress", "priority": "high"})
	if u["status"] != "in_progress" || u["started_at"] == nil || u["title"] != "Call back" {
		t.Fatalf("updated %v", u)
	}
	f := d.expectEvents(t, "update", "task.updated")
	if !slices.Equal(f["task.updated"], []string{"priority", "started_at", "status", "title"}) {
		t.Errorf("changed_fields %v", f["task.updated"])
	}
	d.ok(t, 200, "PATCH", "/tasks/"+id, map[string]any{"title": "Call back", "status": "in_progress"})
	d.expectEvents(t, "update that changes nothing")

	for _, body := range []map[string]any{{"title": nil}, {"status": "done"}, {"priority": nil},
		{"assignee_id": d.co.Owner.ID}, {"assignee_type": "org_member"}} {
		if r := d.do(t, "PATCH", "/tasks/"+id, body); r.Status != 422 || r.ErrorCode() != "validation_failed" {
			t.Errorf("%v: %d %s", body, r.Status, r.Raw)
		}
	}
	if r := d.do(t, "PATCH", "/tasks/"+id, map[string]any{"client_id": "cli_00000000000000000000000000"}); r.Status != 404 {
		t.Errorf("unknown client: %d %s", r.Status, r.Raw)
	}
	c := d.ok(t, 200, "PATCH", "/tasks/"+id, map[string]any{"status": "completed", "description": nil, "client_id": nil,
		"assignee_id": d.co.Owner.ID, "assignee_type": "org_member"})
	if c["completed_at"] == nil || c["client_id"] != nil || c["assignee_id"] != d.co.Owner.ID {
		t.Fatalf("completed %v", c)
	}
	f = d.expectEvents(t, "complete", "task.updated")
	if !slices.Equal(f["task.updated"], []string{"assignee_id", "assignee_type", "client_id", "completed_at", "status"}) {
		t.Errorf("changed_fields %v", f["task.updated"])
	}

	d.ok(t, 200, "DELETE", "/tasks/"+id, nil)
	evs := d.log.Next(t)
	if len(evs) != 1 || evs[0].Type != "task.deleted" || evs[0].Data.Object["status"] != "completed" {
		t.Errorf("delete events %+v", evs)
	}
	if r := d.do(t, "GET", "/tasks/"+id, nil); r.Status != 404 {
		t.Errorf("after delete: %d", r.Status)
	}
}

// Spec 6.3 rule 7: deleting a service order records only
// service_order.deleted; its appointment and its revenue entry stay,
// unlinked, and the quote it came from may become an order again.
func TestDeletingAnOrderUnlinksItsAppointmentRevenueAndQuote(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	key := d.co.OwnerKey(t, "service_orders:create", "service_orders:update", "quotes:read", "appointments:create", "finance:create")
	quote := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "Maria", "status": "approved",
		"items": []map[string]any{{"description": "Visita", "quantity": 1, "unit_price_cents": 5000, "total_cents": 5000}}})["id"]
	fromQuote := map[string]any{"quote_id": quote, "scheduled_start": "2099-01-01T12:00:00Z", "create_appointment": true}
	o := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/service_orders/from_quote", Key: key, Body: fromQuote})
	if o.Status != 201 || o.Body["appointment_id"] == nil {
		t.Fatalf("from_quote: %d %s", o.Status, o.Raw)
	}
	id, appointment := o.Body["id"].(string), o.Body["appointment_id"].(string)
	if r := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/service_orders/" + id + "/complete", Key: key,
		Body: map[string]any{"link_financial_transaction": true}}); r.Status != 200 {
		t.Fatalf("complete: %d %s", r.Status, r.Raw)
	}
	var revenue string
	for _, e := range d.log.Next(t) {
		if e.Type == "financial_transaction.created" {
			revenue = e.Data.Object["id"].(string)
		}
	}

	if r := d.do(t, "DELETE", "/service_orders/"+id, nil); r.Status != 200 || r.Body["deleted"] != true || r.Body["object"] != "service_order" {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	evs := d.log.Next(t)
	if len(evs) != 1 || evs[0].Type != "service_order.deleted" || evs[0].Data.Object["status"] != "completed" {
		t.Fatalf("delete events %v", testkit.Types(evs))
	}
	if r := d.do(t, "GET", "/service_orders/"+id, nil); r.Status != 404 {
		t.Errorf("order after delete: %d", r.Status)
	}
	if a := d.ok(t, 200, "GET", "/appointments/"+appointment, nil); a["service_order_id"] != nil {
		t.Errorf("appointment still linked: %v", a)
	}
	if e := d.ok(t, 200, "GET", "/financial_transactions/"+revenue, nil); e["service_order_id"] != nil || e["amount_cents"] != 5000.0 {
		t.Errorf("revenue entry: %v", e)
	}
	if r := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/service_orders/from_quote", Key: key, Body: fromQuote}); r.Status != 201 {
		t.Errorf("converting the quote again: %d %s", r.Status, r.Raw)
	}
	if r := d.do(t, "DELETE", "/service_orders/"+id, nil); r.Status != 404 {
		t.Errorf("second delete: %d", r.Status)
	}
}

// Spec 6.3 rule 3 and 6.4: a service change that changes nothing records
// nothing; deleting a service records service.deleted.
func TestDashboardServiceDeleteRecordsEvent(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	id := d.ok(t, 201, "POST", "/services", map[string]any{"name": "Instalação", "base_price_cents": 5000})["id"].(string)
	d.expectEvents(t, "create", "service.created")
	d.ok(t, 200, "PATCH", "/services/"+id, map[string]any{"base_price_cents": 5000})
	d.expectEvents(t, "update that changes nothing")
	d.ok(t, 200, "DELETE", "/services/"+id, nil)
	evs := d.log.Next(t)
	if len(evs) != 1 || evs[0].Type != "service.deleted" || evs[0].Data.Object["base_price_cents"] != 5000.0 {
		t.Errorf("delete events %+v", evs)
	}
	if r := d.do(t, "GET", "/services/"+id, nil); r.Status != 404 {
		t.Errorf("after delete: %d", r.Status)
	}
}
