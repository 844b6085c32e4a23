package admin_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// dash is a company's admin API in a test.
type dash struct {
	api *httpkit.API
	co  *testkit.Company
	log *testkit.EventLog
}

func newDash(t *testing.T) *dash {
	t.Helper()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	return &dash{api: httpkit.NewAPI(t, httpkit.APIOptions{}), co: co, log: co.Events()}
}

// do sends an admin request for the company (path relative to
// /admin/v1/companies/{company}).
func (d *dash) do(t *testing.T, method, path string, body any) *httpkit.Response {
	t.Helper()
	return d.api.Admin(t, method, "/companies/"+d.co.Company.ID+path, body)
}

// ok sends an admin request and fails the test unless it answers want.
func (d *dash) ok(t *testing.T, want int, method, path string, body any) map[string]any {
	t.Helper()
	r := d.do(t, method, path, body)
	if r.Status != want {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r.Body
}

// events returns the types and changed_fields of the events recorded since
// the last call, sorted by type.
func (d *dash) events(t *testing.T) ([]string, map[string][]string) {
	t.Helper()
	evs := d.log.Next(t)
	fields := map[string][]string{}
	for _, e := range evs {
		if e.Data.ChangedFields != nil {
			fields[e.Type] = e.Data.ChangedFields
		}
	}
	return testkit.Types(evs), fields
}

// expectEvents fails unless the events since the last call are want
// (sorted by type).
func (d *dash) expectEvents(t *testing.T, what string, want ...string) map[string][]string {
	t.Helper()
	got, fields := d.events(t)
	if !slices.Equal(got, want) {
		t.Errorf("%s: events %v, want %v", what, got, want)
	}
	return fields
}

// Spec 6.1, 6.3 rules 1–3 and 6.4: dashboard quote writes record
// quote.created, quote.updated (changed_fields alphabetical, no
// updated_at; a write that changes nothing records nothing),
// quote.status_changed with quote.updated on a status change, and
// quote.deleted with the quote as it was.
func TestDashboardQuoteWritesRecordEvents(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	q := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "Maria",
		"items": []map[string]any{{"description": "Reforma", "quantity": 1, "unit_price_cents": 20000, "total_cents": 20000}}})
	id := q["id"].(string)
	if q["status"] != "draft" || q["total_cents"] != 20000.0 || q["object"] != "quote" {
		t.Fatalf("created %v", q)
	}
	d.expectEvents(t, "create", "quote.created")

	u := d.ok(t, 200, "PATCH", "/quotes/"+id, map[string]any{"notes": "30 days", "discount_cents": 1000})
	if u["total_cents"] != 19000.0 || u["notes"] != "30 days" {
		t.Fatalf("updated %v", u)
	}
	f := d.expectEvents(t, "update", "quote.updated")
	if !slices.Equal(f["quote.updated"], []string{"discount_cents", "notes", "total_cents"}) {
		t.Errorf("changed_fields %v", f["quote.updated"])
	}
	d.ok(t, 200, "PATCH", "/quotes/"+id, map[string]any{"notes": "30 days"})
	d.expectEvents(t, "update that changes nothing")

	d.ok(t, 200, "POST", "/quotes/"+id+"/status", map[string]any{"status": "sent"})
	f = d.expectEvents(t, "status", "quote.status_changed", "quote.updated")
	if !slices.Equal(f["quote.updated"], []string{"status"}) {
		t.Errorf("changed_fields %v", f["quote.updated"])
	}
	d.ok(t, 200, "POST", "/quotes/"+id+"/status", map[string]any{"status": "sent"})
	d.expectEvents(t, "same status again")

	if r := d.do(t, "DELETE", "/quotes/"+id, nil); r.Status != 200 || r.Body["deleted"] != true {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	evs := d.log.Next(t)
	if len(evs) != 1 || evs[0].Type != "quote.deleted" || evs[0].Data.Object["notes"] != "30 days" {
		t.Errorf("delete: %+v", evs)
	}
	if r := d.do(t, "GET", "/quotes/"+id, nil); r.Status != 404 {
		t.Errorf("after delete: %d", r.Status)
	}
}

// Spec 3 (quote fragments) and 7: an approved or cancelled quote refuses
// updates (409); an approved one may only be cancelled, a cancelled one
// never changes; null on a field that cannot be cleared is 422, and a client
// of another company is 404.
func TestApprovedOrCanceledQuoteRefusesUpdates(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	other := newDash(t)
	foreign := other.ok(t, 201, "POST", "/clients", map[string]any{"name": "Other"})["id"]
	id := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "Maria"})["id"].(string)
	for _, tc := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"client_name": nil}, 422, "validation_failed"},
		{map[string]any{"items": nil}, 422, "validation_failed"},
		{map[string]any{"discount_cents": -1}, 422, "validation_failed"},
		{map[string]any{"client_id": foreign}, 404, "resource_not_found"},
		{map[string]any{"notes": nil}, 422, "validation_failed"},
		{map[string]any{"valid_until": nil, "payment_plan": nil, "client_id": nil, "notes": ""}, 200, ""},
	} {
		if r := d.do(t, "PATCH", "/quotes/"+id, tc.body); r.Status != tc.status || r.ErrorCode() != tc.code {
			t.Errorf("%v: %d %s", tc.body, r.Status, r.Raw)
		}
	}
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		if r := other.do(t, m, "/quotes/"+id, map[string]any{}); r.Status != 404 || r.ErrorCode() != "resource_not_found" {
			t.Errorf("%s another company's quote: %d %s", m, r.Status, r.Raw)
		}
	}
	d.ok(t, 200, "POST", "/quotes/"+id+"/status", map[string]any{"status": "approved"})
	d.events(t)
	for _, tc := range []struct {
		method, path string
		body         map[string]any
	}{
		{"PATCH", "/quotes/" + id, map[string]any{"notes": "late change"}},
		{"POST", "/quotes/" + id + "/status", map[string]any{"status": "sent"}},
	} {
		if r := d.do(t, tc.method, tc.path, tc.body); r.Status != 409 || r.ErrorCode() != "conflict" {
			t.Errorf("approved: %s %v: %d %s", tc.path, tc.body, r.Status, r.Raw)
		}
	}
	d.ok(t, 200, "POST", "/quotes/"+id+"/status", map[string]any{"status": "canceled"})
	d.expectEvents(t, "cancel", "quote.status_changed", "quote.updated")
	for _, body := range []map[string]any{{"notes": "x"}, {"status": "draft"}} {
		path := "/quotes/" + id
		method := "PATCH"
		if body["status"] != nil {
			path, method = path+"/status", "POST"
		}
		if r := d.do(t, method, path, body); r.Status != 409 {
			t.Errorf("canceled: %v: %d %s", body, r.Status, r.Raw)
		}
	}
	d.expectEvents(t, "refused writes")
}

// Spec 7: deleting a quote that became an active sale is 409; once that
// sale is canceled the quote may be deleted, and the sale keeps its content
// with quote_id cleared and no event of its own (6.3 rule 7).
func TestDeletingAQuoteThatBecameAnActiveSaleIsConflict(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	key := d.co.OwnerKey(t, "quotes:read", "quotes:update", "sales:create", "sales:read", "sales:update")
	id := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "Maria", "status": "approved",
		"items": []map[string]any{{"description": "Reforma", "quantity": 1, "unit_price_cents": 20000, "total_cents": 20000}}})["id"].(string)
	sale := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/quotes/" + id + "/convert_to_sale", Key: key,
		Body: map[string]any{"payment_plan": map[string]any{"mode": "paid_full", "paid_at": "2026-01-01"}}})
	if sale.Status != 201 {
		t.Fatalf("convert: %d %s", sale.Status, sale.Raw)
	}
	saleID := sale.Body["id"].(string)
	d.events(t)
	if r := d.do(t, "DELETE", "/quotes/"+id, nil); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Fatalf("delete with an active sale: %d %s", r.Status, r.Raw)
	}
	if r := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/sales/" + saleID + "/cancel", Key: key,
		Body: map[string]any{"reason": "gave up"}}); r.Status != 200 {
		t.Fatalf("cancel sale: %d %s", r.Status, r.Raw)
	}
	d.events(t)
	d.ok(t, 200, "DELETE", "/quotes/"+id, nil)
	d.expectEvents(t, "delete", "quote.deleted")
	if s := d.ok(t, 200, "GET", "/sales/"+saleID, nil); s["quote_id"] != nil || s["total_cents"] != 20000.0 {
		t.Errorf("sale after its quote was deleted: %v", s)
	}
}

// Spec 6.3 rule 7: opening the quote list expires the open quotes past
// valid_until and sends quote.status_changed for each, once: the next list
// sends nothing. Quotes still valid, without a date, or approved keep
// their status.
func TestQuoteListExpiresPastDueQuotesOnce(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	past, future := "2020-01-01T00:00:00Z", "2099-01-01T00:00:00Z"
	due := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "A", "status": "sent", "valid_until": past})["id"]
	draft := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "B", "valid_until": past})["id"]
	valid := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "C", "status": "sent", "valid_until": future})["id"]
	approved := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "D", "status": "approved", "valid_until": past})["id"]
	undated := d.ok(t, 201, "POST", "/quotes", map[string]any{"client_name": "E", "status": "sent"})["id"]
	d.events(t)

	l := d.ok(t, 200, "GET", "/quotes?limit=10", nil)
	status := map[any]any{}
	for _, q := range l["data"].([]any) {
		status[q.(map[string]any)["id"]] = q.(map[string]any)["status"]
	}
	want := map[any]any{due: "expired", draft: "expired", valid: "sent", approved: "approved", undated: "sent"}
	for id, s := range want {
		if status[id] != s {
			t.Errorf("%v: status %v, want %s", id, status[id], s)
		}
	}
	evs := d.log.Next(t)
	if got := testkit.Types(evs); !slices.Equal(got, []string{"quote.status_changed", "quote.status_changed", "quote.updated", "quote.updated"}) {
		t.Fatalf("events %v", got)
	}
	for _, e := range evs {
		if id := e.Data.Object["id"]; (id != due && id != draft) || e.Data.Object["status"] != "expired" {
			t.Errorf("%s for %v (%v)", e.Type, id, e.Data.Object["status"])
		}
	}
	d.ok(t, 200, "GET", "/quotes", nil)
	d.expectEvents(t, "second list")
	if q := d.ok(t, 200, "GET", "/quotes/"+due.(string), nil); q["status"] != "expired" {
		t.Errorf("GET after expiry: %v", q["status"])
	}
}

// A quote's payment_plan is sent as written and documented as
// QuotePaymentPlan (null, or a sale plan's members, each optional), so
// writes take only that shape: 422 names the member that breaks it, and
// what is accepted comes back unchanged (EventLog checks each event's body
// against the document).
func TestQuotePaymentPlanKeepsItsDocumentedShape(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	for _, tc := range []struct {
		plan  any
		param string // "": accepted
	}{
		{nil, ""},
		{map[string]any{}, ""},
		{map[string]any{"mode": "paid_full", "paid_at": "2026-01-01"}, ""},
		{map[string]any{"entry_amount_cents": 5000, "installments": []map[string]any{{"amount_cents": 15000, "due_date": "2026-02-10"}},
			"payment_method": "pix", "account_id": nil, "note": "kept"}, ""},
		{"paid_full", "payment_plan"},
		{[]any{}, "payment_plan"},
		{map[string]any{"paid_at": "01/02/2026"}, "payment_plan"},
		{map[string]any{"mode": "weekly"}, "payment_plan.mode"},
		{map[string]any{"payment_method": "cheque"}, "payment_plan.payment_method"},
		{map[string]any{"installments": []map[string]any{{"amount_cents": 100}}}, "payment_plan.installments[0].due_date"},
	} {
		r := d.do(t, "POST", "/quotes", map[string]any{"client_name": "Maria", "payment_plan": tc.plan})
		if tc.param == "" {
			if r.Status != 201 {
				t.Errorf("%v: %d %s", tc.plan, r.Status, r.Raw)
				continue
			}
			want, _ := json.Marshal(tc.plan)
			got, _ := json.Marshal(r.Body["payment_plan"])
			if !bytes.Equal(normalJSON(t, want), normalJSON(t, got)) {
				t.Errorf("%v came back as %s", tc.plan, got)
			}
			d.expectEvents(t, "create", "quote.created")
			continue
		}
		if r.Status != 422 || fieldParams(r) != tc.param {
			t.Errorf("%v: %d %s, want 422 on %s", tc.plan, r.Status, r.Raw, tc.param)
		}
	}
}

// normalJSON re-encodes b with sorted keys.
func normalJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return out
}

// fieldParams joins the params of a validation error's fields.
func fieldParams(r *httpkit.Response) string {
	e, _ := r.Body["error"].(map[string]any)
	fs, _ := e["errors"].([]any)
	var ps []string
	for _, f := range fs {
		m, _ := f.(map[string]any)
		p, _ := m["param"].(string)
		ps = append(ps, p)
	}
	return strings.Join(ps, ",")
}
