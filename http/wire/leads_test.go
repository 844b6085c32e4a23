package wire_test

import (
	"errors"
	"testing"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/leads"
)

// decodeAndValidate is what POST /leads does with a body before any
// permission or database work.
func decodeAndValidate(body []byte) (*leads.LeadCaptureCreate, error) {
	var r leads.LeadCaptureCreate
	if err := wire.DecodeBytes(body, &r); err != nil {
		return nil, err
	}
	_, err := leads.Validate(r, "co_test")
	return &r, err
}

// catalogued fails unless err is an API error of the catalogue (never an
// internal error) whose field errors use catalogued field codes.
func catalogued(t *testing.T, body []byte, err error) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: not an API error: %v", body, err)
	}
	if _, ok := apierr.Default.Lookup(e.Code); !ok || e.Code == apierr.InternalError {
		t.Fatalf("%q: code %q", body, e.Code)
	}
	if e.Code != apierr.ValidationFailed && e.Code != apierr.InvalidRequest {
		t.Fatalf("%q: decoding and validation answered %q", body, e.Code)
	}
	for _, f := range e.Fields {
		// (An empty member name is reported as param "", which is its name.)
		if _, ok := apierr.Default.Field(f.Code); !ok {
			t.Fatalf("%q: field error %+v", body, f)
		}
	}
}

// FuzzLeadRequest feeds arbitrary bytes through the request decoder and the
// capture rules: no panic, and every refusal is a catalogued 400 or 422.
func FuzzLeadRequest(f *testing.F) {
	for _, s := range []string{
		`{"name":"Ana","email":"ana@example.com"}`,
		`{"name":"Ana","phone":"(11) 98765-4321","task":null}`,
		`{"name":"Ana","phone":"+1 415 555 0100","source":"site","notes":"x","task":{"title":"Ligar","due_in_hours":48,"priority":"high","assignee_id":"mem_00000000000000000000000000","assignee_type":"org_member"}}`,
		`{"name":"Ana","email":"a@b.co","task":{"due_at":"2030-01-02T03:04:05Z","due_in_hours":1}}`,
		`{"task":{"bogus":1,"due_in_hours":1e99}}`,
		`{"task":[1,2]}`, `{"task":"x"}`, `{"name":null,"email":5}`, `{"task":{"task":{}}}`,
		`{"name":"a","name":"b"}`, `[]`, `{`, ``, "{\"name\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeAndValidate(body)
		if err != nil {
			catalogued(t, body, err)
			return
		}
		if r.Name == nil || (r.Email == nil && r.Phone == nil) {
			t.Fatalf("%q: accepted without name or contact", body)
		}
	})
}

// The task member tells omitted (default task) from null (no task) from an
// object, and an object is decoded strictly with "task." paths.
func TestTaskMemberForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body        string
		opens, null bool
		param       string
		code        apierr.FieldCode
	}{
		{`{"name":"Ana","email":"a@example.com"}`, true, false, "", ""},
		{`{"name":"Ana","email":"a@example.com","task":null}`, false, true, "", ""},
		{`{"name":"Ana","email":"a@example.com","task":{}}`, true, false, "", ""},
		{`{"name":"Ana","email":"a@example.com","task":{"x":1}}`, false, false, "task.x", "unknown_field"},
		{`{"name":"Ana","email":"a@example.com","task":{"due_in_hours":"2"}}`, false, false, "task.due_in_hours", "invalid_type"},
		{`{"name":"Ana","email":"a@example.com","task":{"due_in_hours":1e30}}`, false, false, "task.due_in_hours", "out_of_range"},
		{`{"name":"Ana","email":"a@example.com","task":{"due_at":"amanhã"}}`, false, false, "task.due_at", "invalid_timestamp"},
		{`{"name":"Ana","email":"a@example.com","task":true}`, false, false, "task", "invalid_type"},
	} {
		r, err := decodeAndValidate([]byte(tc.body))
		if tc.param != "" {
			var e *apierr.Error
			if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Param != tc.param || e.Fields[0].Code != tc.code {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		if err != nil || r.OpensTask() != tc.opens || r.Task.Null() != tc.null {
			t.Errorf("%s: %v opens=%v null=%v", tc.body, err, r.OpensTask(), r.Task.Null())
		}
	}
}
