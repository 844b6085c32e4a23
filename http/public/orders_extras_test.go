package public_test

import (
	"context"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/notify"
	"oficina/tenant"
)

// Parts 4.3 and 5.4: create_appointment with scheduled_start needs
// appointments:create (403 and nothing saved without it, not even a
// number); the appointment is mirrored to the connected calendars of the
// technicians and of the member creating it; without scheduled_start
// nothing is created and the permission is not needed.
func TestCreateAppointmentNeedsPermissionAndScheduledStart(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	withApt := e.Co.OwnerKey(t, append([]string{"appointments:create"}, orderPerms...)...)
	tech, support, bystander := e.technician(t, "Tech"), e.technician(t, "Support"), e.technician(t, "Other")
	cal := func(member, provider, id string) string {
		return e.Admin(t, "POST", "/connected_calendars", map[string]any{"member_id": member, "provider": provider,
			"external_calendar_id": id}).Body["id"].(string)
	}
	techCal := cal(tech.ID, "google", "tech@example.com")
	ownerCal := cal(e.Co.Owner.ID, "outlook", "owner@example.com")
	cal(bystander.ID, "google", "other@example.com")
	offCal := cal(support.ID, "caldav", "https://dav.example.com/s")
	e.Admin(t, "DELETE", "/connected_calendars/"+offCal, nil)

	body := map[string]any{"client_name": "A", "technician_id": tech.ID, "support_technician_ids": []string{support.ID},
		"scheduled_start": "2030-05-01T12:00:00Z", "create_appointment": true}
	if r := e.Do(t, "POST", "/service_orders", body); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Fatalf("without appointments:create: %d %s", r.Status, r.Raw)
	}
	invalid := map[string]any{"scheduled_start": "2030-05-01T12:00:00Z", "create_appointment": true}
	if r := e.Do(t, "POST", "/service_orders", invalid); r.Status != 422 {
		t.Fatalf("an invalid body is 422 before the extra permission: %d %s", r.Status, r.Raw)
	}
	member := e.Co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember),
		Permissions: &tenant.MemberPermissions{"service_orders": {"read", "create"}}})
	memberKey := e.Co.Key(t, member, append([]string{"appointments:create"}, orderPerms...)...).Secret
	if r := e.API.Do(t, httpkit.Req{Method: "POST", Path: "/service_orders", Key: memberKey, Body: body}); r.Status != 403 ||
		r.ErrorCode() != "member_permission_denied" {
		t.Fatalf("member without appointments: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "service_orders") + e.count(t, "appointments") + len(e.log.Next(t)); n != 0 {
		t.Fatalf("refused creation saved %d rows", n)
	}

	noStart := e.create(t, map[string]any{"client_name": "B", "create_appointment": true})
	if noStart["appointment_id"] != nil || noStart["number"] != 1.0 || e.count(t, "appointments") != 0 {
		t.Fatalf("without scheduled_start: %v", noStart)
	}

	r := e.API.Do(t, httpkit.Req{Method: "POST", Path: "/service_orders", Key: withApt, Body: body})
	if r.Status != 201 || r.Body["appointment_id"] == nil || r.Body["status"] != "scheduled" {
		t.Fatalf("with permission: %d %s", r.Status, r.Raw)
	}
	a := e.Admin(t, "GET", "/appointments/"+r.Body["appointment_id"].(string), nil).Body
	if a["service_order_id"] != r.Body["id"] || a["starts_at"] != "2030-05-01T12:00:00Z" || a["ends_at"] != "2030-05-01T13:00:00Z" {
		t.Errorf("appointment %v", a)
	}
	var mirrored []string
	for _, m := range a["mirrors"].([]any) {
		mm := m.(map[string]any)
		if mm["status"] != "pending" {
			t.Errorf("mirror %v", mm)
		}
		mirrored = append(mirrored, mm["connection_id"].(string))
	}
	want := []string{techCal, ownerCal}
	slices.Sort(want)
	slices.Sort(mirrored)
	if !slices.Equal(mirrored, want) {
		t.Errorf("mirrored to %v, want %v", mirrored, want)
	}
}

// Part 4.3: send_to_technician notifies the technician in charge and the
// support team through the messaging outbox after creation; with no
// technician_id nobody is notified.
func TestSendToTechnicianNotifiesTechnicianAndSupport(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	lead, s1, s2 := e.technician(t, "Lead"), e.technician(t, "S1"), e.technician(t, "S2")
	o := e.create(t, map[string]any{"client_name": "A", "technician_id": lead.ID, "support_technician_ids": []string{s1.ID, s2.ID},
		"send_to_technician": true})
	var ns []notify.Notification
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		ns, err = notify.ForSubject(ctx, tx, o["id"].(string))
		return err
	})
	got := map[string]string{}
	for _, n := range ns {
		if n.Status != "pending" || n.Channel != "messaging" || n.Template != "service_order.assigned" {
			t.Errorf("notification %+v", n)
		}
		got[n.RecipientMemberID] = string(n.Payload)
	}
	if len(got) != 3 || got[lead.ID] == "" || got[s1.ID] == "" || got[s2.ID] == "" {
		t.Fatalf("recipients %v", got)
	}
	if r := e.Admin(t, "GET", "/service_orders/"+o["id"].(string)+"/notifications", nil); len(r.Body["data"].([]any)) != 3 {
		t.Errorf("admin list %s", r.Raw)
	}
	e.create(t, map[string]any{"client_name": "B", "support_technician_ids": []string{s1.ID}, "send_to_technician": true})
	e.create(t, map[string]any{"client_name": "C", "technician_id": lead.ID})
	if n := e.count(t, "notifications"); n != 3 {
		t.Errorf("%d notifications, want only the first order's 3", n)
	}
}

// GET /service_orders: newest first, filters, cursor pagination; a bad
// filter is 400 invalid_request.
func TestListServiceOrders(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	tech := e.technician(t, "Tech")
	cl := e.Admin(t, "POST", "/clients", map[string]any{"name": "Ana"}).Body["id"].(string)
	a := e.create(t, map[string]any{"client_name": "A", "technician_id": tech.ID})
	b := e.create(t, map[string]any{"client_name": "B", "client_id": cl, "scheduled_start": "2030-01-01T10:00:00Z"})
	c := e.create(t, map[string]any{"client_name": "C", "support_technician_ids": []string{tech.ID}})
	ids := func(path string) []any {
		t.Helper()
		r := e.Do(t, "GET", path, nil)
		if r.Status != 200 || r.Body["object"] != "list" {
			t.Fatalf("%s: %d %s", path, r.Status, r.Raw)
		}
		var out []any
		for _, o := range r.Body["data"].([]any) {
			out = append(out, o.(map[string]any)["id"])
		}
		return out
	}
	for path, want := range map[string][]any{
		"/service_orders":                                            {c["id"], b["id"], a["id"]},
		"/service_orders?status=scheduled":                           {b["id"]},
		"/service_orders?client_id=" + cl:                            {b["id"]},
		"/service_orders?technician_id=" + tech.ID:                   {c["id"], a["id"]},
		"/service_orders?limit=1&starting_after=" + c["id"].(string): {b["id"]},
		"/service_orders?created_after=2000-01-01T00:00:00Z&updated_after=2000-01-01T00:00:00Z": {c["id"], b["id"], a["id"]},
		"/service_orders?created_before=2000-01-01T00:00:00Z":                                   nil,
	} {
		if got := ids(path); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
	if r := e.Do(t, "GET", "/service_orders?limit=1", nil); r.Body["has_more"] != true {
		t.Errorf("has_more: %s", r.Raw)
	}
	for _, bad := range []string{"?status=done", "?created_after=2030-01-01", "?colour=red", "?limit=0", "?status=pending&status=scheduled", "?client_id=nope", "?technician_id=mem_%00"} {
		if r := e.Do(t, "GET", "/service_orders"+bad, nil); r.Status != 400 || r.ErrorCode() != "invalid_request" {
			t.Errorf("%s: %d %s", bad, r.Status, r.Raw)
		}
	}
	reader := e.Co.OwnerKey(t, "service_orders:create")
	if r := e.API.Do(t, httpkit.Req{Method: "GET", Path: "/service_orders", Key: reader}); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Errorf("without read: %d %s", r.Status, r.Raw)
	}
}

// Parts 4.1 and 4.3: a creation retried with the same Idempotency-Key
// returns the stored order and creates nothing again (no second number, no
// second event).
func TestCreateServiceOrderRetriedWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	send := func() *httpkit.Response {
		return e.API.Do(t, httpkit.Req{Method: "POST", Path: "/service_orders", Key: e.Key,
			Body: map[string]any{"client_name": "A"}, Header: map[string]string{"Idempotency-Key": "order-7f3a"}})
	}
	first, again := send(), send()
	if first.Status != 201 || again.Status != 201 || !soSameJSON(t, first.Body, again.Body) {
		t.Fatalf("first %d %s\nagain %d %s", first.Status, first.Raw, again.Status, again.Raw)
	}
	if n, evs := e.count(t, "service_orders"), e.log.Next(t); n != 1 || len(evs) != 1 {
		t.Errorf("%d orders, events %v", n, testkit.Types(evs))
	}
	if o := e.create(t, map[string]any{"client_name": "B"}); o["number"] != 2.0 {
		t.Errorf("next number %v", o["number"])
	}
}
