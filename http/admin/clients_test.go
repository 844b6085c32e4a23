package admin_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/tasks"
	"oficina/tenant"
)

// Spec 6.1, 6.3 and 6.4: dashboard writes to clients record client.created,
// client.updated (changed_fields in alphabetical order, no updated_at; a
// write that changes nothing records nothing) and client.deleted, each
// carrying the record as GET returns it.
func TestDashboardClientWritesRecordEvents(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	base := "/companies/" + co.Company.ID + "/clients"

	c := api.Admin(t, "POST", base, map[string]any{"name": "Maria", "email": "maria@example.com"})
	if c.Status != 201 || c.Body["object"] != "client" || c.Body["status"] != "active" {
		t.Fatalf("%d %s", c.Status, c.Raw)
	}
	id := c.Body["id"].(string)
	u := api.Admin(t, "PATCH", base+"/"+id, map[string]any{"name": "Maria Souza", "phone": "11 3333-4444", "email": "maria@example.com"})
	if u.Status != 200 || u.Body["name"] != "Maria Souza" || u.Body["phone"] != "11 3333-4444" {
		t.Fatalf("%d %s", u.Status, u.Raw)
	}
	if same := api.Admin(t, "PATCH", base+"/"+id, map[string]any{"name": "Maria Souza"}); same.Status != 200 {
		t.Fatalf("%d %s", same.Status, same.Raw)
	}
	cleared := api.Admin(t, "PATCH", base+"/"+id, map[string]any{"phone": nil, "next_follow_up": "2030-01-02T03:04:05Z"})
	if cleared.Status != 200 || cleared.Body["phone"] != nil || cleared.Body["next_follow_up"] != "2030-01-02T03:04:05Z" {
		t.Fatalf("%d %s", cleared.Status, cleared.Raw)
	}
	if d := api.Admin(t, "DELETE", base+"/"+id, nil); d.Status != 200 || d.Body["deleted"] != true || d.Body["id"] != id {
		t.Fatalf("%d %s", d.Status, d.Raw)
	}
	if g := api.Admin(t, "GET", base+"/"+id, nil); g.Status != 404 || g.ErrorCode() != "resource_not_found" {
		t.Fatalf("after delete: %d %s", g.Status, g.Raw)
	}

	es := co.Events().All(t)
	types := make([]string, len(es))
	for i, e := range es {
		types[i] = e.Type
	}
	if !reflect.DeepEqual(types, []string{"client.created", "client.updated", "client.updated", "client.deleted"}) {
		t.Fatalf("events %v", types)
	}
	if !reflect.DeepEqual(es[0].Data.Object, c.Body) || !reflect.DeepEqual(es[1].Data.Object, u.Body) ||
		!reflect.DeepEqual(es[2].Data.Object, cleared.Body) || !reflect.DeepEqual(es[3].Data.Object, cleared.Body) {
		t.Fatalf("event objects differ from GET representations: %+v", es)
	}
	if got := es[1].Data.ChangedFields; !reflect.DeepEqual(got, []string{"name", "phone"}) {
		t.Fatalf("changed_fields %v", got)
	}
	if got := es[2].Data.ChangedFields; !reflect.DeepEqual(got, []string{"next_follow_up", "phone"}) {
		t.Fatalf("changed_fields %v", got)
	}
}

// Spec 6.3 rule 7: deleting a client unlinks its tasks (they stay, with
// client_id null) and yields only client.deleted, no task event.
func TestDeletingAClientUnlinksItsTasksWithoutTaskEvents(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: co.OwnerKey(t, "leads:create", "tasks:create", "leads:read"),
		Body: map[string]any{"name": "Ana", "email": "ana@example.com"}})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	clientID := r.Body["lead"].(map[string]any)["id"].(string)
	taskID := r.Body["task"].(map[string]any)["id"].(string)
	before := len(co.Events().All(t))
	if d := api.Admin(t, "DELETE", "/companies/"+co.Company.ID+"/clients/"+clientID, nil); d.Status != 200 {
		t.Fatalf("%d %s", d.Status, d.Raw)
	}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		task, err := tasks.Get(ctx, tx, taskID)
		if err != nil {
			return err
		}
		if task.ClientID != nil {
			t.Errorf("task still linked to %s", *task.ClientID)
		}
		return nil
	})
	added := co.Events().All(t)[before:]
	if len(added) != 1 || added[0].Type != "client.deleted" || added[0].Data.Object["id"] != clientID {
		t.Fatalf("events %+v", added)
	}
}

// Dashboard client writes refuse bad input with the envelope: unknown
// fields, invalid contacts, a contact that belongs to another record (409),
// an unknown id (404).
func TestDashboardClientWriteErrors(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	base := "/companies/" + co.Company.ID + "/clients"
	a := api.Admin(t, "POST", base, map[string]any{"name": "A", "email": "a@example.com", "phone": "11 3333-4444"})
	b := api.Admin(t, "POST", base, map[string]any{"name": "B", "email": "b@example.com"})
	if a.Status != 201 || b.Status != 201 {
		t.Fatalf("%s %s", a.Raw, b.Raw)
	}
	bPath := base + "/" + b.Body["id"].(string)
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"duplicate e-mail on create", "POST", base, map[string]any{"name": "C", "email": "A@EXAMPLE.COM"}, 409, "conflict"},
		{"duplicate phone on update", "PATCH", bPath, map[string]any{"phone": "+55 11 3333-4444"}, 409, "conflict"},
		{"invalid e-mail", "PATCH", bPath, map[string]any{"email": "nope"}, 422, "validation_failed"},
		{"name cleared", "PATCH", bPath, map[string]any{"name": nil}, 422, "validation_failed"},
		{"status cleared", "PATCH", bPath, map[string]any{"status": nil}, 422, "validation_failed"},
		{"unknown field", "PATCH", bPath, map[string]any{"nick": "x"}, 422, "validation_failed"},
		{"bad timestamp", "PATCH", bPath, map[string]any{"next_follow_up": "2030-01-02"}, 422, "validation_failed"},
		{"unknown id", "PATCH", base + "/cli_00000000000000000000000000", map[string]any{"name": "x"}, 404, "resource_not_found"},
		{"delete unknown", "DELETE", base + "/nope", nil, 404, "resource_not_found"},
	} {
		r := api.Admin(t, tc.method, tc.path, tc.body)
		if r.Status != tc.status || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if g := api.Admin(t, "GET", bPath, nil); g.Body["email"] != "b@example.com" || g.Body["phone"] != nil {
		t.Fatalf("record changed by refused writes: %s", g.Raw)
	}
}
