package public_test

import (
	"reflect"
	"slices"
	"testing"

	"oficina/ops/testkit"
)

// Part 3.1 exactly, with the events of each write (6.3, 6.4): start,
// complete and cancel only on an open order (else 409); a completed or
// canceled order refuses edits; POST /status goes from any status to any
// other and is the only way to reopen.
func TestOrderStateMachine(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	id := e.create(t, map[string]any{"client_name": "A"})["id"].(string)
	path := "/service_orders/" + id
	e.log.Next(t)

	step := func(name, method, sub string, body any, status int, wantStatus string, wantEvents []string, wantFields []string) map[string]any {
		t.Helper()
		r := e.Do(t, method, path+sub, body)
		if r.Status != status {
			t.Fatalf("%s: %d %s", name, r.Status, r.Raw)
		}
		if status == 409 && r.ErrorCode() != "conflict" {
			t.Fatalf("%s: %s", name, r.Raw)
		}
		if status == 200 && r.Body["status"] != wantStatus {
			t.Fatalf("%s: status %v", name, r.Body["status"])
		}
		evs := e.log.Next(t)
		if !slices.Equal(testkit.Types(evs), wantEvents) {
			t.Fatalf("%s: events %v, want %v", name, testkit.Types(evs), wantEvents)
		}
		for _, ev := range evs {
			if !soSameJSON(t, ev.Data.Object, r.Body) {
				t.Fatalf("%s: %s object differs from the response", name, ev.Type)
			}
			if ev.Type == "service_order.updated" && !slices.Equal(ev.Data.ChangedFields, wantFields) {
				t.Fatalf("%s: changed_fields %v, want %v", name, ev.Data.ChangedFields, wantFields)
			}
		}
		return r.Body
	}
	both := []string{"service_order.status_changed", "service_order.updated"}
	none := []string(nil)

	o := step("start a pending order", "POST", "/start", nil, 200, "in_progress", both, []string{"started_at", "status"})
	if o["started_at"] == nil {
		t.Fatal("started_at not set")
	}
	step("start again changes nothing", "POST", "/start", map[string]any{}, 200, "in_progress", none, nil)
	step("start takes no fields", "POST", "/start", map[string]any{"at": 1}, 422, "", none, nil)
	step("cancel an open order", "POST", "/cancel", nil, 200, "canceled", both, []string{"canceled_at", "status"})
	for _, sub := range []string{"/start", "/complete", "/cancel"} {
		step(sub+" of a canceled order", "POST", sub, nil, 409, "", none, nil)
	}
	step("edit a canceled order", "PATCH", "", map[string]any{"client_name": "B"}, 409, "", none, nil)
	o = step("status reopens", "POST", "/status", map[string]any{"status": "pending"}, 200, "pending", both, []string{"canceled_at", "status"})
	if o["canceled_at"] != nil || o["started_at"] == nil {
		t.Fatalf("reopened: %v", o)
	}
	o = step("complete", "POST", "/complete", map[string]any{}, 200, "completed", both, []string{"completed_at", "status"})
	if o["completed_at"] == nil {
		t.Fatal("completed_at not set")
	}
	for _, sub := range []string{"/start", "/complete", "/cancel"} {
		step(sub+" of a completed order", "POST", sub, nil, 409, "", none, nil)
	}
	step("edit a completed order", "PATCH", "", map[string]any{"priority": "low"}, 409, "", none, nil)
	step("status any to any", "POST", "/status", map[string]any{"status": "scheduled"}, 200, "scheduled", both, []string{"completed_at", "status"})
	step("status to the same status", "POST", "/status", map[string]any{"status": "scheduled"}, 200, "scheduled", none, nil)
	step("status outside the list", "POST", "/status", map[string]any{"status": "done"}, 422, "", none, nil)
	step("status missing", "POST", "/status", map[string]any{}, 422, "", none, nil)
	step("status to completed", "POST", "/status", map[string]any{"status": "completed"}, 200, "completed", both, []string{"completed_at", "status"})
}

// Part 6.3 rule 2: a status change together with a description change
// yields service_order.status_changed and service_order.updated, whose
// changed_fields has both fields; rule 3: a write that changes nothing
// yields no .updated.
func TestStatusAndDescriptionChangeYieldBothEvents(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	id := e.create(t, map[string]any{"client_name": "A", "client_description": "Vazamento"})["id"].(string)
	e.log.Next(t)
	r := e.Do(t, "PATCH", "/service_orders/"+id, map[string]any{"status": "scheduled", "client_description": "Vazamento na pia"})
	if r.Status != 200 || r.Body["status"] != "scheduled" || r.Body["client_description"] != "Vazamento na pia" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	evs := e.log.Next(t)
	if !slices.Equal(testkit.Types(evs), []string{"service_order.status_changed", "service_order.updated"}) {
		t.Fatalf("events %v", testkit.Types(evs))
	}
	if got := evs[1].Data.ChangedFields; !slices.Equal(got, []string{"client_description", "status"}) {
		t.Errorf("changed_fields %v", got)
	}
	r = e.Do(t, "PATCH", "/service_orders/"+id, map[string]any{"client_description": "Vazamento na pia"})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if evs := e.log.Next(t); len(evs) != 0 {
		t.Errorf("no-op PATCH yielded %v", testkit.Types(evs))
	}
	r = e.Do(t, "PATCH", "/service_orders/"+id, map[string]any{"priority": "urgent"})
	if evs := e.log.Next(t); len(evs) != 1 || evs[0].Type != "service_order.updated" || !slices.Equal(evs[0].Data.ChangedFields, []string{"priority"}) {
		t.Errorf("priority change: %d %v", r.Status, evs)
	}
}

// PATCH: an omitted member keeps its value, so a body with one member
// changes that member and nothing else (what a generated client sends).
func TestPatchChangesOnlyTheMembersSent(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	tech := e.technician(t, "Tech")
	o := e.create(t, map[string]any{"client_name": "A", "technician_id": tech.ID, "service_address": "Rua 1",
		"internal_notes": "old", "scheduled_start": "2030-01-01T10:00:00Z", "priority": "high",
		"items": []map[string]any{{"description": "x", "quantity": 2, "unit_price_cents": 100, "total_cents": 200}}})
	path := "/service_orders/" + o["id"].(string)
	r := e.Do(t, "PATCH", path, map[string]any{"internal_notes": "new"})
	if r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Raw)
	}
	for k, before := range o {
		after := r.Body[k]
		switch k {
		case "internal_notes":
			if after != "new" {
				t.Errorf("internal_notes %v", after)
			}
		case "updated_at":
		default:
			if !reflect.DeepEqual(before, after) {
				t.Errorf("%s changed: %v → %v", k, before, after)
			}
		}
	}
}

// PATCH recalculates the totals from the items and checks changed
// references like creation (404); null clears the members that can be
// null (client, type, technician, schedule) and is 422 invalid_value for
// the others (docs/decisions/0016).
func TestPatchServiceOrder(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	tech := e.technician(t, "Tech")
	other := newOrderEnv(t, orderPerms...)
	foreign := other.technician(t, "Foreign")
	o := e.create(t, map[string]any{"client_name": "A", "technician_id": tech.ID,
		"items": []map[string]any{{"description": "x", "quantity": 1, "unit_price_cents": 100, "total_cents": 100}}})
	path := "/service_orders/" + o["id"].(string)
	r := e.Do(t, "PATCH", path, map[string]any{"items": []map[string]any{
		{"description": "y", "quantity": 3, "unit_price_cents": 100, "total_cents": 250}}, "additional_costs_cents": 50, "discount_cents": 20})
	if r.Status != 200 || r.Body["subtotal_cents"] != 250.0 || r.Body["total_cents"] != 280.0 {
		t.Fatalf("totals: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "PATCH", path, map[string]any{"technician_id": foreign.ID}); r.Status != 404 || r.ErrorCode() != "resource_not_found" {
		t.Errorf("foreign technician: %d %s", r.Status, r.Raw)
	}
	for body, want := range map[string]string{
		`{"scheduled_start":"2030-01-01"}`:       "scheduled_start:invalid_timestamp",
		`{"items":[{"quantity":"x"}]}`:           "items[0].quantity:invalid_type",
		`{"status":"done"}`:                      "status:invalid_value",
		`{"priority":null}`:                      "priority:invalid_value",
		`{"colour":"red"}`:                       "colour:unknown_field",
		`{"support_technician_ids":["a","a"]}`:   "support_technician_ids[1]:invalid_value",
		`{"discount_cents":99999999,"items":[]}`: "discount_cents:out_of_range",
		`{"items":null}`:                         "items:invalid_value",
		`{"internal_notes":null}`:                "internal_notes:invalid_value",
		`{"discount_cents":null}`:                "discount_cents:invalid_value",
	} {
		if r := e.Do(t, "PATCH", path, body); r.Status != 422 || !slices.Equal(soFieldErrors(r), []string{want}) {
			t.Errorf("%s: %d %s", body, r.Status, r.Raw)
		}
	}
	if r := e.Do(t, "PATCH", path, map[string]any{"client_name": nil}); r.Status != 422 ||
		!slices.Equal(soFieldErrors(r), []string{"client_name:invalid_value"}) {
		t.Errorf("null client_name: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "PATCH", path, map[string]any{"items": []map[string]any{{"description": "z", "quantity": 1,
		"unit_price_cents": 1, "total_cents": 1, "sku": "x"}}}); r.Status != 422 {
		t.Errorf("unknown item field: %d %s", r.Status, r.Raw)
	}
	r = e.Do(t, "PATCH", path, map[string]any{"technician_id": nil, "items": []any{}, "discount_cents": 0, "additional_costs_cents": 0})
	if r.Status != 200 || r.Body["technician_id"] != nil || r.Body["total_cents"] != 0.0 || len(r.Body["items"].([]any)) != 0 {
		t.Errorf("clear: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "PATCH", "/service_orders/so_00000000000000000000000000", map[string]any{"priority": "low"}); r.Status != 404 {
		t.Errorf("unknown order: %d %s", r.Status, r.Raw)
	}
	if r := other.Do(t, "GET", path, nil); r.Status != 404 || r.ErrorCode() != "resource_not_found" {
		t.Errorf("other company's order: %d %s", r.Status, r.Raw)
	}
	if r := other.Do(t, "POST", path+"/start", nil); r.Status != 404 {
		t.Errorf("other company's order start: %d %s", r.Status, r.Raw)
	}
}
