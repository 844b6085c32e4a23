package public_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// errorParams lists errors[].param:code of a 422.
func errorParams(r *httpkit.Response) []string {
	e, _ := r.Body["error"].(map[string]any)
	list, _ := e["errors"].([]any)
	var out []string
	for _, it := range list {
		m := it.(map[string]any)
		out = append(out, fmt.Sprint(m["param"], ":", m["code"]))
	}
	return out
}

// Spec 4.5 and 7: name is required, email or phone is required (neither
// gives 422), the task's fields are checked (due_in_hours or due_at, the
// assignee pair, priority values), lengths and formats are bounded; every
// refusal is the envelope naming the field, and nothing is saved.
func TestLeadValidation(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "leads:create", "tasks:create")
	long := strings.Repeat("a", 201)
	for _, tc := range []struct {
		name, body string
		status     int
		want       []string // errors[] as param:code
	}{
		{"name missing", `{"email":"a@example.com"}`, 422, []string{"name:required"}},
		{"name blank", `{"name":"  ","email":"a@example.com"}`, 422, []string{"name:required"}},
		{"name too long", `{"name":"` + long + `","email":"a@example.com"}`, 422, []string{"name:too_long"}},
		{"neither email nor phone", `{"name":"Ana"}`, 422, []string{"email:required", "phone:required"}},
		{"blank email, no phone", `{"name":"Ana","email":" "}`, 422, []string{"email:required", "phone:required"}},
		{"null phone", `{"name":"Ana","email":"ana@example.com","phone":null}`, 422, []string{"phone:invalid_value"}},
		{"bad email", `{"name":"Ana","email":"not-an-email"}`, 422, []string{"email:invalid_value"}},
		{"bad phone", `{"name":"Ana","phone":"12ab"}`, 422, []string{"phone:invalid_value"}},
		{"short phone", `{"name":"Ana","phone":"123"}`, 422, []string{"phone:invalid_value"}},
		{"source too long", `{"name":"Ana","phone":"11 3333-4444","source":"` + long + `"}`, 422, []string{"source:too_long"}},
		{"notes too long", `{"name":"Ana","phone":"11 3333-4444","notes":"` + strings.Repeat("n", 10001) + `"}`, 422, []string{"notes:too_long"}},
		{"name wrong type", `{"name":5,"phone":"11 3333-4444"}`, 422, []string{"name:invalid_type"}},
		{"unknown field", `{"name":"Ana","phone":"11 3333-4444","company":"x"}`, 422, []string{"company:unknown_field"}},
		{"both due_in_hours and due_at", `{"name":"Ana","phone":"11 3333-4444","task":{"due_in_hours":2,"due_at":"2030-01-01T00:00:00Z"}}`, 422, []string{"task.due_at:not_allowed"}},
		{"due_in_hours zero", `{"name":"Ana","phone":"11 3333-4444","task":{"due_in_hours":0}}`, 422, []string{"task.due_in_hours:out_of_range"}},
		{"due_in_hours fraction", `{"name":"Ana","phone":"11 3333-4444","task":{"due_in_hours":1.5}}`, 422, []string{"task.due_in_hours:invalid_type"}},
		{"due_at with offset", `{"name":"Ana","phone":"11 3333-4444","task":{"due_at":"2030-01-01T00:00:00-03:00"}}`, 422, []string{"task.due_at:invalid_timestamp"}},
		{"assignee id without type", `{"name":"Ana","phone":"11 3333-4444","task":{"assignee_id":"mem_00000000000000000000000000"}}`, 422, []string{"task.assignee_type:required"}},
		{"assignee type without id", `{"name":"Ana","phone":"11 3333-4444","task":{"assignee_type":"org_member"}}`, 422, []string{"task.assignee_id:required"}},
		{"unknown assignee type", `{"name":"Ana","phone":"11 3333-4444","task":{"assignee_id":"mem_00000000000000000000000000","assignee_type":"robot"}}`, 422, []string{"task.assignee_type:invalid_value"}},
		{"unknown priority", `{"name":"Ana","phone":"11 3333-4444","task":{"priority":"asap"}}`, 422, []string{"task.priority:invalid_value"}},
		{"blank title", `{"name":"Ana","phone":"11 3333-4444","task":{"title":""}}`, 422, []string{"task.title:required"}},
		{"title too long", `{"name":"Ana","phone":"11 3333-4444","task":{"title":"` + strings.Repeat("t", 256) + `"}}`, 422, []string{"task.title:too_long"}},
		{"unknown task field", `{"name":"Ana","phone":"11 3333-4444","task":{"owner":"x"}}`, 422, []string{"task.owner:unknown_field"}},
		{"task not an object", `{"name":"Ana","phone":"11 3333-4444","task":"tomorrow"}`, 422, []string{"task:invalid_type"}},
		{"all at once", `{"task":{"priority":"x"}}`, 422, []string{"name:required", "email:required", "phone:required", "task.priority:invalid_value"}},
		{"broken JSON", `{"name":"Ana",`, 400, nil},
		{"not an object", `["Ana"]`, 400, nil},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: tc.body})
		if r.Status != tc.status || r.Body["error"] == nil {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
			continue
		}
		if got := errorParams(r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: errors %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := countClients(t, co); n != 0 {
		t.Fatalf("%d clients saved", n)
	}
}

// Spec 5.4 (first item) and 9: leads:create (legacy leads:write counts),
// plus tasks:create unless task is null, else 403 permission_missing; the
// member needs clients access, and tasks access when a task opens, else 403
// member_permission_denied. A refused capture saves nothing.
func TestLeadPermissions(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	member := func(perms tenant.MemberPermissions) *tenant.Member {
		return co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Permissions: &perms})
	}
	full := member(tenant.MemberPermissions{"clients": {"create"}, "tasks": {"create"}})
	clientsOnly := member(tenant.MemberPermissions{"clients": {"create"}, "leads": {"create"}})
	tasksOnly := member(tenant.MemberPermissions{"tasks": {"create"}, "leads": {"create"}})
	viewer := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleViewer),
		Permissions: &tenant.MemberPermissions{"clients": {"read", "create"}}})
	const withTask, noTask = `"task":{"priority":"low"}`, `"task":null`
	var n int
	for _, tc := range []struct {
		name   string
		key    string
		task   string // "" omits it (default task)
		status int
		code   string
	}{
		{"no leads permission", co.OwnerKey(t, "tasks:create", "clients:create"), "", 403, "permission_missing"},
		{"default task without tasks:create", co.OwnerKey(t, "leads:create"), "", 403, "permission_missing"},
		{"task object without tasks:create", co.OwnerKey(t, "leads:create"), withTask, 403, "permission_missing"},
		{"member without clients access", co.Key(t, tasksOnly, "leads:create", "tasks:create").Secret, "", 403, "member_permission_denied"},
		{"member without tasks access, default task", co.Key(t, clientsOnly, "leads:create", "tasks:create").Secret, "", 403, "member_permission_denied"},
		{"viewer never writes", co.Key(t, viewer, "leads:create").Secret, noTask, 403, "member_permission_denied"},
		{"null task needs neither tasks:create nor tasks access", co.Key(t, clientsOnly, "leads:create").Secret, noTask, 201, ""},
		{"legacy leads:write", co.OwnerKey(t, "leads:write", "tasks:create"), "", 201, ""},
		{"member with clients and tasks access", co.Key(t, full, "leads:create", "tasks:create").Secret, withTask, 201, ""},
	} {
		body := `{"name":"Ana","email":"perm` + fmt.Sprint(n) + `@example.com"`
		if tc.task != "" {
			body += "," + tc.task
		}
		n++
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: tc.key, Body: body + "}"})
		if r.Status != tc.status || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if c, tk := countClients(t, co), countTasks(t, co); c != 3 || tk != 2 {
		t.Fatalf("saved %d clients and %d tasks, want 3 and 2 (refusals save nothing)", c, tk)
	}
}

// Spec 4.5: without leads:read or clients:read on the key, lead and task
// come with only object and id; either read permission shows them in full.
func TestLeadAnswerWithoutReadPermissionIsSummarised(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	for i, tc := range []struct {
		perms []string
		full  bool
	}{
		{[]string{"leads:create", "tasks:create"}, false},
		{[]string{"leads:create", "tasks:create", "tasks:read"}, false},
		{[]string{"leads:create", "tasks:create", "leads:read"}, true},
		{[]string{"leads:create", "tasks:create", "clients:read"}, true},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: co.OwnerKey(t, tc.perms...),
			Body: map[string]any{"name": "Ana", "email": fmt.Sprintf("sum%d@example.com", i)}})
		if r.Status != 201 {
			t.Fatalf("%v: %d %s", tc.perms, r.Status, r.Raw)
		}
		lead, task := obj(r, "lead"), obj(r, "task")
		if tc.full != (len(lead) > 2) || tc.full != (len(task) > 2) || lead["object"] != "client" || task["object"] != "task" ||
			lead["id"] == nil || task["id"] == nil || r.Body["object"] != "lead_capture" || r.Body["deduplicated"] != false {
			t.Errorf("%v: %s", tc.perms, r.Raw)
		}
	}
}

// Spec 4.5: a contact whose normalised e-mail or phone already belongs to a
// record reuses it, overwrites nothing (name, contacts, status), still
// opens the task (titled with the record's name) and answers
// deduplicated: true; only task.created is recorded.
func TestLeadDeduplication(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "leads:create", "tasks:create", "clients:read")
	created := api.Admin(t, "POST", "/companies/"+co.Company.ID+"/clients", map[string]any{
		"name": "Maria Silva", "email": "Maria.Silva@Example.com", "phone": "(11) 98765-4321", "notes": "cliente antiga"})
	if created.Status != 201 {
		t.Fatalf("%d %s", created.Status, created.Raw)
	}
	id := created.Body["id"].(string)
	before := co.Events().All(t)
	for _, tc := range []struct{ name, body string }{
		{"same e-mail in another case", `{"name":"M.","email":"maria.silva@EXAMPLE.com","phone":"+1 415 555 0100","notes":"nova"}`},
		{"same phone written otherwise", `{"name":"Outra","phone":"+55 11 98765-4321","source":"whatsapp"}`},
		{"phone with the trunk zero", `{"name":"Outra","phone":"011 98765 4321"}`},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: tc.body})
		if r.Status != 201 || r.Body["deduplicated"] != true {
			t.Fatalf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
		lead, task := obj(r, "lead"), obj(r, "task")
		if lead["id"] != id || !reflect.DeepEqual(lead, created.Body) {
			t.Errorf("%s: record changed or another one used:\n%v\n%v", tc.name, lead, created.Body)
		}
		if task["title"] != "Entrar em contato com Maria Silva" || task["client_id"] != id {
			t.Errorf("%s: task %v", tc.name, task)
		}
	}
	if got := api.Do(t, httpkit.Req{Method: "GET", Path: "/clients/" + id, Key: key}); !reflect.DeepEqual(got.Body, created.Body) {
		t.Fatalf("record changed: %s", got.Raw)
	}
	if n := countClients(t, co); n != 1 {
		t.Fatalf("%d clients", n)
	}
	added := testkit.Types(co.Events().All(t)[len(before):])
	if !reflect.DeepEqual(added, []string{"task.created", "task.created", "task.created"}) {
		t.Fatalf("events %v", added)
	}
}

// Spec 4.5: two (here eight) concurrent captures of the same new contact
// create exactly one record; every capture opens its task; one
// client.created is recorded.
func TestConcurrentCapturesOfOneContactCreateOneRecord(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "leads:create", "tasks:create", "leads:read")
	const n = 8
	results := make([]*httpkit.Response, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			// Half send the e-mail, half the phone as well: both paths meet on one record.
			body := map[string]any{"name": fmt.Sprint("Ana ", i), "email": "ana.race@example.com"}
			if i%2 == 1 {
				body["phone"] = "11 99999-0000"
			}
			results[i] = api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: body})
		}()
	}
	start.Done()
	done.Wait()
	ids, fresh := map[any]bool{}, 0
	for _, r := range results {
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		ids[obj(r, "lead")["id"]] = true
		if r.Body["deduplicated"] == false {
			fresh++
		}
	}
	if len(ids) != 1 || fresh != 1 || countClients(t, co) != 1 || countTasks(t, co) != n {
		t.Fatalf("records %d, fresh %d, clients %d, tasks %d", len(ids), fresh, countClients(t, co), countTasks(t, co))
	}
	var createdEvents int
	for _, e := range co.Events().All(t) {
		if e.Type == "client.created" {
			createdEvents++
		}
	}
	if createdEvents != 1 {
		t.Fatalf("%d client.created events", createdEvents)
	}
}

// Spec 4.1 with lead capture: a retry with the same Idempotency-Key answers
// the first capture again and saves nothing more.
func TestLeadCaptureRetriedWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	req := httpkit.Req{Method: "POST", Path: "/leads", Key: co.OwnerKey(t, "leads:create", "tasks:create", "leads:read"),
		Body: map[string]any{"name": "Ana", "email": "ana@example.com"}, Header: map[string]string{"Idempotency-Key": "lead-1"}}
	first, again := api.Do(t, req), api.Do(t, req)
	if first.Status != 201 || again.Status != 201 || !reflect.DeepEqual(first.Body, again.Body) {
		t.Fatalf("%d %s\n%d %s", first.Status, first.Raw, again.Status, again.Raw)
	}
	if c, tk, es := countClients(t, co), countTasks(t, co), len(co.Events().All(t)); c != 1 || tk != 1 || es != 2 {
		t.Fatalf("clients %d, tasks %d, events %d", c, tk, es)
	}
}

// Issue 24 item 5 (docs/api.md, "E-mail addresses"): a lead whose e-mail
// holds an invisible or bidirectional character is 422 invalid_value on
// email and saves nothing; the NFD spelling, fullwidth letters and another
// case of a known address find its record (deduplicated), and the address
// is stored composed (NFC).
func TestLookAlikeEmailsAreRefusedOrDeduplicated(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "leads:create", "clients:read")
	capture := func(email string) *httpkit.Response {
		t.Helper()
		return api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: map[string]any{"name": "Jos\u00e9", "email": email, "task": nil}})
	}
	first := capture("jose\u0301@example.com") // NFD
	if first.Status != 201 || obj(first, "lead")["email"] != "jos\u00e9@example.com" {
		t.Fatalf("first: %d %s", first.Status, first.Raw)
	}
	id := obj(first, "lead")["id"]
	for _, email := range []string{"jos\u00e9@example.com", "JOS\u00c9@EXAMPLE.COM", "\uff4a\uff4f\uff53\u00e9@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.\uff43\uff4f\uff4d"} {
		r := capture(email)
		if r.Status != 201 || r.Body["deduplicated"] != true || obj(r, "lead")["id"] != id {
			t.Errorf("%+q: %d %s, want the record of %+q", email, r.Status, r.Raw, "jos\u00e9@example.com")
		}
	}
	for _, email := range []string{"jos\u00e9\u200b@example.com", "jo\u200ds\u00e9@example.com", "\ufeffjos\u00e9@example.com",
		"jo\u00ads\u00e9@example.com", "jos\u00e9\u202e@example.com", "jos\u00e9@example\u2066.com", "jos\u00e9\u200f@example.com",
		"jos\u00e9\u3164@example.com"} {
		r := capture(email)
		if got := errorParams(r); r.Status != 422 || !reflect.DeepEqual(got, []string{"email:invalid_value"}) {
			t.Errorf("%+q: %d %s, want 422 email invalid_value", email, r.Status, r.Raw)
		}
	}
	if n := countClients(t, co); n != 1 {
		t.Errorf("%d clients, want 1", n)
	}
}
