package contract_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"oficina/ops/proving/contract"
)

// tiny is a small hand-made OpenAPI 3.1 document with what the public
// document is meant to have: nullable types, enums, formats, required
// headers, status ranges and default, $refs to components, a server path
// prefix and a webhooks section.
func tiny(t *testing.T) *contract.Document {
	t.Helper()
	raw, err := os.ReadFile("testdata/tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := contract.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

const thing = `{"id":"t_1","status":"open","note":null,"created_at":"2026-01-02T03:04:05Z"}`

func TestResponsesAreCheckedAgainstTheirOperation(t *testing.T) {
	t.Parallel()
	d := tiny(t)
	jsonOK := header("Content-Type", "application/json", "Request-Id", "req_1")
	cases := []struct {
		name      string
		r         contract.Response
		operation string // "" when the document has no operation for the request
		want      []string
	}{
		{name: "a documented answer passes",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK, Body: []byte(thing)},
			operation: "GET /things/{id} (getThing)"},
		{name: "the server's path prefix is matched",
			r:         contract.Response{Method: "GET", Path: "/v1/things/t_1", Status: 200, Header: jsonOK, Body: []byte(thing)},
			operation: "GET /things/{id} (getThing)"},
		{name: "a literal path wins over a template",
			r:         contract.Response{Method: "POST", Path: "/things/search", Status: 200, Header: jsonOK, Body: []byte(`{"data":[` + thing + `]}`)},
			operation: "POST /things/search (searchThings)"},
		{name: "null where the type allows it, a string where it does not",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK, Body: []byte(strings.Replace(thing, `"id":"t_1"`, `"id":null`, 1))},
			operation: "GET /things/{id} (getThing)", want: []string{`at "/id": got null, want string [#/components/schemas/Thing/properties/id/type]`}},
		{name: "a value outside the enum",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK, Body: []byte(strings.Replace(thing, `"open"`, `"opened"`, 1))},
			operation: "GET /things/{id} (getThing)", want: []string{`at "/status": value must be one of`}},
		{name: "a timestamp that is not RFC 3339",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK, Body: []byte(strings.Replace(thing, "2026-01-02T03:04:05Z", "2026-01-02 03:04", 1))},
			operation: "GET /things/{id} (getThing)", want: []string{`at "/created_at"`, `date-time`}},
		{name: "an integer outside int32",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK, Body: []byte(strings.Replace(thing, `"id"`, `"total_cents":4294967296,"id"`, 1))},
			operation: "GET /things/{id} (getThing)", want: []string{`at "/total_cents"`, `32-bit`}},
		{name: "a missing required property and an undeclared one",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK, Body: []byte(`{"id":"t_1","status":"open","created_at":"2026-01-02T03:04:05Z","extra":1}`)},
			operation: "GET /things/{id} (getThing)", want: []string{`missing property 'note'`, `additional properties 'extra' not allowed`}},
		{name: "an undocumented status",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 500, Header: jsonOK, Body: []byte(`{"error":{"code":"internal_error"}}`)},
			operation: "GET /things/{id} (getThing)", want: []string{`→ 500: status 500 is not documented (documented: 200, 4XX)`}},
		{name: "a status range, through a $ref response",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 404, Header: jsonOK, Body: []byte(`{"error":{}}`)},
			operation: "GET /things/{id} (getThing)", want: []string{`→ 404 at "/error": missing property 'code' [#/components/schemas/Error/properties/error/required]`}},
		{name: "default answers any other status",
			r:         contract.Response{Method: "POST", Path: "/things/t_1/ping", Status: 409, Header: jsonOK, Body: []byte(`{"error":{"code":"conflict"}}`)},
			operation: "POST /things/{id}/ping (pingThing)"},
		{name: "a required header absent",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: header("Content-Type", "application/json"), Body: []byte(thing)},
			operation: "GET /things/{id} (getThing)", want: []string{`header Request-Id is documented as required but absent`}},
		{name: "a header against its schema, numbers read from the text",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: header("Content-Type", "application/json", "Request-Id", "abc", "RateLimit-Remaining", "-1"), Body: []byte(thing)},
			operation: "GET /things/{id} (getThing)", want: []string{`header Request-Id: "abc"`, `header RateLimit-Remaining: "-1"`}},
		{name: "a header that reads as a number passes an integer schema",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: header("Content-Type", "application/json", "Request-Id", "req_2", "RateLimit-Remaining", "59"), Body: []byte(thing)},
			operation: "GET /things/{id} (getThing)"},
		{name: "an undocumented media type",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: header("Content-Type", "text/plain", "Request-Id", "req_1"), Body: []byte("hello")},
			operation: "GET /things/{id} (getThing)", want: []string{`Content-Type text/plain is not documented (documented: application/json)`}},
		{name: "a body that is not JSON",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK, Body: []byte("{")},
			operation: "GET /things/{id} (getThing)", want: []string{`body is not JSON`}},
		{name: "no body where one is documented",
			r:         contract.Response{Method: "GET", Path: "/things/t_1", Status: 200, Header: jsonOK},
			operation: "GET /things/{id} (getThing)", want: []string{`no body, but the document declares application/json`}},
		{name: "a body where none is documented",
			r:         contract.Response{Method: "POST", Path: "/things/t_1/ping", Status: 202, Header: jsonOK, Body: []byte(`{}`)},
			operation: "POST /things/{id}/ping (pingThing)", want: []string{`a body of 2 bytes (application/json), but the document declares none`}},
		{name: "a 204 without body",
			r:         contract.Response{Method: "DELETE", Path: "/things/t_1", Status: 204, Header: header()},
			operation: "DELETE /things/{id} (deleteThing)"},
		{name: "no operation for the method: nothing to check",
			r: contract.Response{Method: "PUT", Path: "/things/t_1", Status: 405, Header: jsonOK, Body: []byte(`{}`)}},
		{name: "no operation for the path: nothing to check",
			r: contract.Response{Method: "GET", Path: "/other", Status: 404, Header: jsonOK, Body: []byte(`{}`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := d.Check(tc.r)
			if res.Operation != tc.operation {
				t.Errorf("operation %q, want %q", res.Operation, tc.operation)
			}
			assertMismatches(t, res.Mismatches, tc.want)
		})
	}
}

// assertMismatches wants one mismatch containing each of want, and none
// when want is empty.
func assertMismatches(t *testing.T, got []contract.Mismatch, want []string) {
	t.Helper()
	all := make([]string, len(got))
	for i, m := range got {
		all[i] = m.String()
	}
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("mismatches, want none:\n%s", strings.Join(all, "\n"))
	}
	for _, w := range want {
		found := false
		for _, s := range all {
			found = found || strings.Contains(s, w)
		}
		if !found {
			t.Errorf("no mismatch contains %q; got:\n%s", w, strings.Join(all, "\n"))
		}
	}
}

func TestWebhookBodiesAreCheckedAgainstTheWebhooksSection(t *testing.T) {
	t.Parallel()
	d := tiny(t)
	cases := []struct {
		name, body string
		want       []string
	}{
		{name: "a valid event", body: `{"id":"evt_1","type":"thing.created","data":{"object":` + thing + `}}`},
		{name: "the object of the event against its schema",
			body: `{"id":"evt_1","type":"thing.created","data":{"object":{"id":"t_1"}}}`,
			want: []string{`webhook thing.created at "/data/object": missing properties 'status', 'note', 'created_at'`}},
		{name: "a webhook entry that is a $ref to a path item",
			body: `{"type":"thing.deleted","data":{}}`,
			want: []string{`webhook thing.deleted at "/data": missing property 'id'`}},
		{name: "an event type without an entry", body: `{"type":"thing.updated","data":{}}`,
			want: []string{`webhook thing.updated: event type "thing.updated" has no entry in webhooks`}},
		{name: "a body without type", body: `{"data":{}}`, want: []string{`body has no string "type"`}},
		{name: "a body that is not JSON", body: `{`, want: []string{`body is not JSON`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assertMismatches(t, d.Webhook([]byte(tc.body)), tc.want)
		})
	}
}

func TestAWebhookNeedsAWebhooksSection(t *testing.T) {
	t.Parallel()
	d, err := contract.Load([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	assertMismatches(t, d.Webhook([]byte(`{"type":"sale.paid"}`)), []string{"the document has no webhooks section"})
}

func TestOnlyOpenAPI31IsLoaded(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"openapi":"3.0.3","paths":{}}`, `[]`, `{`} {
		if _, err := contract.Load([]byte(doc)); err == nil {
			t.Errorf("Load(%s): no error", doc)
		}
	}
}

func TestTheTallyCountsAndQuotes(t *testing.T) {
	t.Parallel()
	var tally contract.Tally
	tally.Add("TestA", contract.Result{Operation: "GET /x"})
	tally.Add("TestA", contract.Result{})
	tally.Add("TestB", contract.Result{Operation: "GET /x", Mismatches: []contract.Mismatch{
		{Operation: "GET /x", Status: 200, Pointer: "/a", Reason: "got null, want string"},
		{Operation: "GET /x", Status: 200, Pointer: "/b", Reason: "got null, want string"}}})
	s := tally.Summary("pkg")
	for _, w := range []string{"contract pkg: 2 responses checked", "1 mismatched in 1 tests", "1 answered requests the document has no operation for",
		"1  GET /x → 200", "2  got null, want string", `TestB: GET /x → 200 at "/a": got null, want string (and 1 more in this answer)`} {
		if !strings.Contains(s, w) {
			t.Errorf("summary lacks %q:\n%s", w, s)
		}
	}
	if tally.Checked() != 2 {
		t.Errorf("Checked() = %d, want 2", tally.Checked())
	}
}

// Every request body example of the generated document is accepted by its
// own schema (an integrator copies them), webhook bodies included, and
// every webhook has one.
func TestRequestExamplesMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := contract.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range doc.Examples() {
		t.Error(m.String())
	}
	if missing := doc.WebhooksWithoutExample(); len(missing) > 0 {
		t.Errorf("webhooks without an example: %v", missing)
	}
}
