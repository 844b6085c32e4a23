package public_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/clients"
	"oficina/tenant"
)

// fixedClock is the injected clock of the lead tests: due dates are checked
// against it, never against the wall clock.
var fixedClock = time.Date(2030, 3, 4, 10, 20, 30, 0, time.UTC)

func clockAt(t time.Time) func() time.Time { return func() time.Time { return t } }

func countClients(t *testing.T, co *testkit.Company) int {
	t.Helper()
	var n int64
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		n, err = tx.NewSelect().Model((*clients.Row)(nil)).Count(ctx)
		return err
	})
	return int(n)
}

func countTasks(t *testing.T, co *testkit.Company) int {
	t.Helper()
	var n int64
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		n, err = tx.NewSelect().Table("tasks").Count(ctx)
		return err
	})
	return int(n)
}

func obj(r *httpkit.Response, name string) map[string]any {
	m, _ := r.Body[name].(map[string]any)
	return m
}

// Spec 4.5 and 2.7: a capture registers the contact as a client record
// (status lead, notes and source on the record), opens the default task due
// 24 hours later titled "Entrar em contato com <name>", answers 201
// lead_capture, and GET /clients/{id} returns the record. Events:
// client.created and task.created carrying the objects as answered.
func TestLeadCaptureCreatesRecordAndDefaultTask(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{Now: clockAt(fixedClock)})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "leads:create", "tasks:create", "clients:read")

	r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: map[string]any{
		"name": "Maria Souza", "email": "Maria@Example.com", "phone": "(11) 98765-4321",
		"source": "site", "notes": "Quer orçamento de instalação",
	}})
	if r.Status != 201 || r.Body["object"] != "lead_capture" || r.Body["deduplicated"] != false {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	lead, task := obj(r, "lead"), obj(r, "task")
	for k, want := range map[string]any{"object": "client", "name": "Maria Souza", "email": "Maria@Example.com",
		"phone": "(11) 98765-4321", "status": "lead", "source": "site", "notes": "Quer orçamento de instalação",
		"created_at": "2030-03-04T10:20:30Z"} {
		if lead[k] != want {
			t.Errorf("lead.%s = %v, want %v", k, lead[k], want)
		}
	}
	for k, want := range map[string]any{"object": "task", "title": "Entrar em contato com Maria Souza",
		"due_date": "2030-03-05T10:20:30Z", "status": "pending", "priority": "medium", "client_id": lead["id"],
		"assignee_id": nil, "assignee_type": nil, "is_overdue": false, "description": "Quer orçamento de instalação"} {
		if task[k] != want {
			t.Errorf("task.%s = %v, want %v", k, task[k], want)
		}
	}
	got := api.Do(t, httpkit.Req{Method: "GET", Path: "/clients/" + lead["id"].(string), Key: key})
	if got.Status != 200 || !reflect.DeepEqual(got.Body, lead) {
		t.Fatalf("GET /clients: %d %s\nlead: %v", got.Status, got.Raw, lead)
	}
	// One write: both events share its timestamp; their order is not defined.
	es := co.Events().All(t)
	byType := map[string]map[string]any{}
	for _, e := range es {
		byType[e.Type] = e.Data.Object
	}
	if len(es) != 2 || !reflect.DeepEqual(byType["client.created"], lead) || !reflect.DeepEqual(byType["task.created"], task) {
		t.Fatalf("events %v differ from the answer:\n%v", testkit.Types(es), byType)
	}
}

// Spec 4.5: `task: null` opens no task (and needs no tasks:create); the
// answer's task is null and only client.created is recorded.
func TestLeadWithNullTaskOpensNone(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: co.OwnerKey(t, "leads:create", "leads:read"),
		Body: `{"name":"João","phone":"11 3333-4444","task":null}`})
	if r.Status != 201 || r.Body["task"] != nil || obj(r, "lead")["status"] != "lead" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if n := countTasks(t, co); n != 0 {
		t.Fatalf("%d tasks", n)
	}
	if got := testkit.Types(co.Events().All(t)); !reflect.DeepEqual(got, []string{"client.created"}) {
		t.Fatalf("events %v", got)
	}
}

// Spec 4.5: a task object sets title, description, due_in_hours or due_at,
// priority and the assignee (a member of the company, with its type).
func TestLeadTaskObject(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{Now: clockAt(fixedClock)})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	tech := co.Member(t, tenant.MemberInput{Type: testkit.Ptr(tenant.TypeTechnician)})
	key := co.OwnerKey(t, "leads:create", "tasks:create", "clients:read")
	for i, tc := range []struct {
		name string
		task map[string]any
		want map[string]any
	}{
		{"due in hours, assigned to a panel member",
			map[string]any{"title": "Ligar", "description": "Depois das 14h", "due_in_hours": 48, "priority": "high",
				"assignee_id": co.Owner.ID, "assignee_type": "org_member"},
			map[string]any{"title": "Ligar", "description": "Depois das 14h", "due_date": "2030-03-06T10:20:30Z",
				"priority": "high", "assignee_id": co.Owner.ID, "assignee_type": "org_member"}},
		{"due at, technician, default title",
			map[string]any{"due_at": "2030-04-01T12:00:00Z", "priority": "urgent", "assignee_id": tech.ID, "assignee_type": "technician"},
			map[string]any{"title": "Entrar em contato com Ana", "due_date": "2030-04-01T12:00:00Z", "priority": "urgent",
				"assignee_id": tech.ID, "assignee_type": "technician", "description": nil}},
		{"empty object: the default task",
			map[string]any{},
			map[string]any{"title": "Entrar em contato com Ana", "due_date": "2030-03-05T10:20:30Z", "priority": "medium",
				"assignee_id": nil, "assignee_type": nil}},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key,
			Body: map[string]any{"name": "Ana", "email": fmt.Sprintf("ana%d@example.com", i), "task": tc.task}})
		if r.Status != 201 {
			t.Fatalf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
		task := obj(r, "task")
		for k, want := range tc.want {
			if task[k] != want {
				t.Errorf("%s: task.%s = %v, want %v", tc.name, k, task[k], want)
			}
		}
	}
}

// Spec 4.5: the assignee must be an active member of the company, of the
// type sent; otherwise 404 resource_not_found and nothing is saved.
func TestLeadAssigneeMustBelongToTheCompany(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	other := testkit.NewCompany(t, tenant.CompanyInput{})
	suspended := co.Member(t, tenant.MemberInput{})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.UpdateMember(ctx, tx, suspended.ID, tenant.MemberInput{Status: testkit.Ptr("suspended")}, time.Now())
		return err
	})
	key := co.OwnerKey(t, "leads:create", "tasks:create")
	for name, assignee := range map[string][2]string{
		"another company's member": {other.Owner.ID, "org_member"},
		"suspended member":         {suspended.ID, "org_member"},
		"type does not match":      {co.Owner.ID, "technician"},
		"malformed id":             {"nope", "org_member"},
		"unknown id":               {"mem_00000000000000000000000000", "seller"},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: map[string]any{"name": "Ana",
			"email": "ana@example.com", "task": map[string]any{"assignee_id": assignee[0], "assignee_type": assignee[1]}}})
		if r.Status != 404 || r.ErrorCode() != "resource_not_found" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	if n := countClients(t, co); n != 0 {
		t.Fatalf("%d clients saved", n)
	}
	if es := co.Events().All(t); len(es) != 0 {
		t.Fatalf("events %v", testkit.Types(es))
	}
}
