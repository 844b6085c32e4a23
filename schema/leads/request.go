// Package leads captures contacts sent by other systems (POST /leads, spec
// 4.5): a lead is a client record (status "lead") and capturing one opens a
// follow-up task. The rules — required fields, de-duplication on the
// normalised e-mail or phone, the default task, the permissions of spec 5.4
// and what the answer shows — live here and are testable without HTTP.
package leads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"oficina/schema/apitime"
	"oficina/schema/field"
	"oficina/schema/tasks"
	"oficina/tenant"
)

// LeadCaptureCreate is the body of POST /leads. It decodes with wire.DecodeBytes.
type LeadCaptureCreate struct {
	Name   *string   `json:"name" api:"required" minLength:"1" maxLength:"200" pattern:"nonblank"`
	Email  *string   `json:"email" maxLength:"254" pattern:"email"`
	Phone  *string   `json:"phone" maxLength:"40" pattern:"phone"`
	Source *string   `json:"source" maxLength:"200"`
	Notes  *string   `json:"notes" maxLength:"10000"`
	Task   TaskField `json:"task" api:"nullable"`
}

// RequiredAnyOf: a capture needs an e-mail or a phone (either, or both).
func (LeadCaptureCreate) RequiredAnyOf() [][]string { return [][]string{{"email"}, {"phone"}} }

// Rules: a blank e-mail or phone counts as absent, so one of them must be
// more than white space (Validate).
func (LeadCaptureCreate) Rules() []field.Rule {
	return []field.Rule{field.EitherNonBlank("email", "phone")}
}

// LeadTask is the task object of a capture.
type LeadTask struct {
	Title        *string                `json:"title" minLength:"1" maxLength:"255" pattern:"nonblank"`
	Description  *string                `json:"description" maxLength:"10000"`
	DueInHours   *int64                 `json:"due_in_hours" min:"1" max:"8784"`
	DueAt        *apitime.Time          `json:"due_at"`
	Priority     *tasks.TaskPriority    `json:"priority"`
	AssigneeID   *string                `json:"assignee_id"`
	AssigneeType *tenant.TeamMemberType `json:"assignee_type"`
}

// Rules: due_in_hours or due_at, not both; assignee_id and assignee_type
// both or neither (taskInput, tasks.TaskCreate.Check).
func (LeadTask) Rules() []field.Rule {
	return append([]field.Rule{field.Exclusive("due_in_hours", "due_at")}, field.Together("assignee_id", "assignee_type")...)
}

// TaskField is the "task" member: omitted (the default task), null (no
// task) or an object. Unlike field.Opt it decodes the object strictly, so an
// unknown or mistyped member of the task is a 422 naming "task.<field>".
type TaskField struct {
	set, null bool
	value     LeadTask
}

func (t TaskField) Null() bool               { return t.set && t.null }
func (t TaskField) Object() (LeadTask, bool) { return t.value, t.set && !t.null }

// UnmarshalJSON records presence and decodes an object strictly. Type
// errors come back as *json.UnmarshalTypeError, to which encoding/json adds
// the "task." path; an unknown member is reported in encoding/json's own
// wording with the path included, which the request decoder names as
// unknown_field.
func (t *TaskField) UnmarshalJSON(b []byte) error {
	t.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		t.null = true
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t.value); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return te
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("json: unknown field %q", "task."+strings.Trim(name, `"`))
		}
		return err
	}
	return nil
}

// MarshalJSON renders the field as sent (null when omitted or null).
func (t TaskField) MarshalJSON() ([]byte, error) {
	if !t.set || t.null {
		return []byte("null"), nil
	}
	return json.Marshal(t.value)
}

// OpensTask reports whether the capture opens a task: unless "task" is null.
func (r *LeadCaptureCreate) OpensTask() bool { return !r.Task.Null() }
