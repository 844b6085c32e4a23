package leads_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/apierr"
	"oficina/schema/clients"
	"oficina/schema/leads"
	"oficina/schema/tasks"
)

// Issue 26 item 6: the lengths, bounds and patterns the OpenAPI document
// gives a capture are the validators' (clients.Build, taskInput,
// tasks.TaskCreate.Check).
func TestDocumentedRulesAreTheValidators(t *testing.T) {
	t.Parallel()
	n := strconv.Itoa
	testkit.Tags(t, map[string]map[string]string{
		"name":         {"minLength": "1", "maxLength": n(clients.MaxName), "pattern": "nonblank"},
		"email":        {"maxLength": n(clients.MaxEmailLen), "pattern": "email"},
		"phone":        {"maxLength": n(clients.MaxPhoneLen), "pattern": "phone"},
		"source":       {"maxLength": n(clients.MaxName)},
		"notes":        {"maxLength": n(clients.MaxText)},
		"title":        {"minLength": "1", "maxLength": n(tasks.MaxTitle), "pattern": "nonblank"},
		"description":  {"maxLength": n(tasks.MaxDescription)},
		"due_in_hours": {"min": "1", "max": n(leads.MaxDueInHours)},
	}, reflect.TypeFor[leads.LeadCaptureCreate](), reflect.TypeFor[leads.LeadTask]())
}

// Issue 26 item 6: the rules between members the document gives a capture
// (Rules, as if/then) are Validate's: a blank e-mail or phone counts as
// absent, so one must be more than white space; due_in_hours or due_at;
// assignee_id and assignee_type together.
func TestDocumentedMemberRulesAreValidates(t *testing.T) {
	t.Parallel()
	refused := func(body string) []apierr.FieldError {
		var r leads.LeadCaptureCreate
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		if _, err := leads.Validate(r, "co_x"); err != nil {
			return apierr.As(err).Fields
		}
		return nil
	}
	for body, want := range map[string][]apierr.FieldError{
		`{"name": "Ana", "email": " ", "phone": "+55 11 91234-5678"}`: nil,
		`{"name": "Ana", "email": "ana@example.com", "phone": ""}`:    nil,
		`{"name": "Ana", "email": " ", "phone": "\t"}`:                {{Param: "email", Code: apierr.Required}, {Param: "phone", Code: apierr.Required}},
		`{"name": "Ana", "email": ""}`:                                {{Param: "email", Code: apierr.Required}, {Param: "phone", Code: apierr.Required}},
		`{"name": "Ana", "phone": "11912345678", "task": {"due_in_hours": 2, "due_at": "2030-01-01T00:00:00Z"}}`: {
			{Param: "task.due_at", Code: apierr.NotAllowed}},
		`{"name": "Ana", "phone": "11912345678", "task": {"assignee_id": "mem_x"}}`:        {{Param: "task.assignee_type", Code: apierr.Required}},
		`{"name": "Ana", "phone": "11912345678", "task": {"assignee_type": "technician"}}`: {{Param: "task.assignee_id", Code: apierr.Required}},
	} {
		if got := refused(body); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
	rules := leads.LeadCaptureCreate{}.Rules()
	if len(rules) != 1 || rules[0].If != "email" || !slices.Equal(rules[0].Require, []string{"phone"}) {
		t.Errorf("capture rules %+v, want e-mail or phone not blank", rules)
	}
	if got := len(leads.LeadTask{}.Rules()); got != 3 {
		t.Errorf("%d task rules, want 3: due_in_hours or due_at, assignee both ways", got)
	}
}
