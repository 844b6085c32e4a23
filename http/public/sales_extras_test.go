package public_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// 4.4 and 5.4: converting a quote needs the route's quotes permission plus
// sales:create; finance permissions only when the request decides on
// finance; decrement_stock needs no products:update. The sale takes the
// quote's client, lines, discount, costs and plan; the quote must be
// approved and converts once (second conversion 409).
func TestConvertQuoteToSale(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	p := e.product(t, map[string]any{"name": "Cadeira", "price_cents": 20000, "stock_quantity": 5})
	client := e.client(t)
	quote := func(status string) string {
		q := e.admin(t, "POST", "/quotes", map[string]any{"client_id": client, "client_name": "Cliente", "status": status,
			"items": []map[string]any{
				{"description": "Cadeira", "quantity": 2, "unit_price_cents": 18000, "total_cents": 36000, "product_id": p["id"]},
				{"description": "Cabo", "quantity": 2.5, "unit_price_cents": 1000, "total_cents": 2500}},
			"discount_cents": 500, "additional_costs_cents": 1000, "recurring_total_cents": 9900,
			"payment_plan": map[string]any{"entry_amount_cents": 9000,
				"installments": []map[string]any{{"amount_cents": 15000, "due_date": "2099-01-10"}, {"amount_cents": 15000, "due_date": "2099-02-10"}}}})
		return q["id"].(string)
	}
	approved := quote("approved")
	path := "/quotes/" + approved + "/convert_to_sale"
	finMember := e.Co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Permissions: &tenant.MemberPermissions{
		"quotes": {"read", "update"}, "sales": {"read", "create"}, "finance": {"read", "create"}}})
	for _, tc := range []struct {
		name, code string
		key        string
		body       map[string]any
	}{
		{"route permission", "permission_missing", e.Co.OwnerKey(t, "sales:create", "quotes:read"), nil},
		{"sales:create", "permission_missing", e.Co.OwnerKey(t, "quotes:update"), nil},
		{"track_in_finance true without finance:create", "permission_missing", e.Co.OwnerKey(t, "quotes:update", "sales:create"),
			map[string]any{"track_in_finance": true}},
		{"track_in_finance by a member without finance access", "member_permission_denied",
			e.Co.Key(t, e.Co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Permissions: &tenant.MemberPermissions{
				"quotes": {"read", "update"}, "sales": {"read", "create"}}}), "quotes:update", "sales:create").Secret,
			map[string]any{"track_in_finance": false}},
	} {
		var body any // nil sends no body
		if tc.body != nil {
			body = tc.body
		}
		r := e.As(t, tc.key, "POST", path, body)
		if r.Status != 403 || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	member := e.Co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Permissions: &tenant.MemberPermissions{
		"quotes": {"read", "update"}}})
	if r := e.As(t, e.Co.Key(t, member, "quotes:update", "sales:create").Secret, "POST", path, nil); r.Status != 403 || r.ErrorCode() != "member_permission_denied" {
		t.Errorf("member without sales access: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "SELECT count(*) FROM sales"); n != 0 {
		t.Fatalf("refusals saved %d sales", n)
	}
	key := e.Co.Key(t, finMember, "quotes:update", "sales:create", "finance:create").Secret
	r := e.As(t, key, "POST", path, map[string]any{"track_in_finance": true, "decrement_stock": true})
	if r.Status != 201 {
		t.Fatalf("convert: %d %s", r.Status, r.Raw)
	}
	s := r.Body
	items := saleList(s, "items")
	// 2×18000 + 2500 − 500 + 1000 = 39000; the monthly recurring amount is never added.
	if s["quote_id"] != approved || s["client_id"] != client || saleNum(s["total_cents"]) != 39000 || len(items) != 2 ||
		items[0]["type"] != "catalog" || saleNum(items[0]["unit_price_cents"]) != 18000 || items[1]["type"] != "custom" ||
		saleNum(items[1]["quantity"]) != 1 || saleNum(items[1]["total_price_cents"]) != 2500 {
		t.Fatalf("converted: %s", mustJSON(t, s))
	}
	plan := s["payment_plan"].(map[string]any)
	if plan["mode"] != "entry_and_rest" || saleNum(plan["entry_amount_cents"]) != 9000 || s["payment_status"] != "partial" {
		t.Errorf("plan from the quote: %v", plan)
	}
	if stock := saleNum(e.admin(t, "GET", "/products/"+p["id"].(string), nil)["stock_quantity"]); stock != 3 {
		t.Errorf("stock: %d", stock)
	}
	if q := e.admin(t, "GET", "/quotes/"+approved, nil); q["status"] != "approved" {
		t.Errorf("quote after conversion: %v", q)
	}
	if r := e.As(t, key, "POST", path, nil); r.Status != 409 {
		t.Errorf("second conversion: %d %s", r.Status, r.Raw)
	}
	if r := e.As(t, key, "POST", "/quotes/"+quote("sent")+"/convert_to_sale", nil); r.Status != 409 {
		t.Errorf("quote not approved: %d %s", r.Status, r.Raw)
	}
	if r := e.As(t, key, "POST", "/quotes/quo_00000000000000000000000000/convert_to_sale", nil); r.Status != 404 {
		t.Errorf("unknown quote: %d %s", r.Status, r.Raw)
	}
	// A plan in the request replaces the quote's.
	r = e.As(t, key, "POST", "/quotes/"+quote("approved")+"/convert_to_sale", map[string]any{"payment_plan": map[string]any{"mode": "paid_full"}})
	if r.Status != 201 || r.Body["payment_status"] != "paid" {
		t.Errorf("with a plan: %d %s", r.Status, r.Raw)
	}
}

// 6.3 rules 5 and 7: the daily routine marks installments and sales past
// due (in the company's time zone) overdue with summarized events; a
// receipt number changes without an event.
func TestSaleOverdueRoutineAndReceipts(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	past := e.sale(t, customSale(2000, map[string]any{"mode": "installments", "installments": installmentsBody("2020-01-10", 1000, "2099-01-10", 1000)}))
	future := e.sale(t, customSale(1000, map[string]any{"mode": "installments", "installments": installmentsBody("2099-01-10", 1000)}))
	// Created past due, the installment already shows overdue; the routine
	// marks what became due since (here: reset it to open as yesterday's state).
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE sale_installments SET status = 'open' WHERE status = 'overdue'")
		if err == nil {
			_, err = tx.ExecContext(ctx, "UPDATE sales SET overdue = false")
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, "SELECT oficina_sale_refresh_docs(id) FROM sales")
		}
		return err
	})
	e.events(t)
	r := e.API.Admin(t, "POST", "/routines/mark_overdue", map[string]any{"company_id": e.Co.Company.ID})
	if r.Status != 200 || saleNum(r.Body["sales"]) != 1 || saleNum(r.Body["installments"]) != 1 {
		t.Fatalf("routine: %d %s", r.Status, r.Raw)
	}
	got := e.ok(t, "GET", "/sales/"+past["id"].(string), nil)
	if got["overdue"] != true || saleList(got, "installments")[0]["status"] != "overdue" || saleList(got, "installments")[1]["status"] != "open" {
		t.Fatalf("after routine: %s", mustJSON(t, got))
	}
	if f := e.ok(t, "GET", "/sales/"+future["id"].(string), nil); f["overdue"] != false {
		t.Errorf("future sale marked overdue")
	}
	evs := e.events(t)
	if len(evs) != 1 || evs[0].Type != "sale.updated" || len(evs[0].Data.Object) != 2 || evs[0].Data.Object["id"] != past["id"] ||
		len(evs[0].Data.ChangedFields) != 0 {
		t.Fatalf("routine events: %v", evs)
	}
	if raw := e.rawEvents(t, "sale.updated"); len(raw) != 1 || !strings.Contains(raw[0], `"object_truncated":true`) {
		t.Errorf("not summarized: %v", raw)
	}
	if r := e.API.Admin(t, "POST", "/routines/mark_overdue", map[string]any{"company_id": e.Co.Company.ID}); saleNum(r.Body["sales"]) != 0 {
		t.Errorf("second run: %s", r.Raw)
	}
	// Paying the overdue installment clears the flag.
	got = e.ok(t, "POST", "/sales/"+past["id"].(string)+"/payments", map[string]any{"amount_cents": 1000, "paid_at": "2026-01-01"})
	if got["overdue"] != false {
		t.Errorf("still overdue after payment: %v", got["overdue"])
	}
	payID := saleList(got, "payments")[0]["id"].(string)
	e.events(t)
	for i, want := range []string{"R-0001", "R-0001"} {
		r := e.admin(t, "POST", "/sales/"+past["id"].(string)+"/payments/"+payID+"/receipt", nil)
		if r["receipt_number"] != want {
			t.Errorf("receipt %d: %v", i, r)
		}
	}
	if y := saleList(e.ok(t, "GET", "/sales/"+past["id"].(string), nil), "payments")[0]; y["receipt_number"] != "R-0001" {
		t.Errorf("payment: %v", y)
	}
	if evs := e.events(t); len(evs) != 0 {
		t.Errorf("receipt yielded %v", testkit.Types(evs))
	}
}

// 2.1 and 4.1: GET /sales lists newest first with the date filters of the
// spec (inclusive), payment_status and client_id; bad filters are 400.
func TestListSalesFilters(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	client := e.client(t)
	mk := func(date string, mode string, withClient bool) string {
		b := customSale(1000, map[string]any{"mode": mode})
		if mode == "installments" {
			b["payment_plan"].(map[string]any)["installments"] = installmentsBody("2099-01-01", 1000)
		}
		b["sale_date"] = date
		if withClient {
			b["client_id"] = client
		}
		return e.sale(t, b)["id"].(string)
	}
	a := mk("2026-01-01", "paid_full", false)
	b := mk("2026-02-01", "installments", true)
	c := mk("2026-03-01", "installments", false)
	ids := func(query string) []string {
		r := e.Do(t, "GET", "/sales"+query, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Raw)
		}
		var out []string
		for _, s := range saleList(r.Body, "data") {
			out = append(out, s["id"].(string))
		}
		return out
	}
	for query, want := range map[string][]string{
		"":                                       {c, b, a},
		"?sale_date_after=2026-02-01":            {c, b},
		"?sale_date_before=2026-02-01":           {b, a},
		"?payment_status=paid":                   {a},
		"?client_id=" + client:                   {b},
		"?limit=1&starting_after=" + c:           {b},
		"?canceled=false&payment_status=pending": {c, b},
	} {
		if got := ids(query); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", query, got, want)
		}
	}
	for _, bad := range []string{"?sale_date_after=2026-02-01T00:00:00Z", "?payment_status=late", "?limit=0", "?canceled=maybe"} {
		if r := e.Do(t, "GET", "/sales"+bad, nil); r.Status != 400 || r.ErrorCode() != "invalid_request" {
			t.Errorf("%s: %d %s", bad, r.Status, r.Raw)
		}
	}
	if r := e.Do(t, "GET", "/sales/"+a, nil); r.Status != 200 {
		t.Fatal(r.Status)
	}
	other := newSaleEnv(t)
	if r := other.Do(t, "GET", "/sales/"+a, nil); r.Status != 404 || r.ErrorCode() != "resource_not_found" {
		t.Errorf("another company's sale: %d %s", r.Status, r.Raw)
	}
}

// docs/api.md (converting a quote): payment_plan defaults to the quote's,
// and a quote without a payment plan converts as paid_full — with {} or
// no body at all — rather than 422 payment_plan required.
func TestConvertQuoteWithoutPlanDefaultsToPaidFull(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	key := e.Co.OwnerKey(t, "quotes:update", "sales:create", "sales:read")
	for _, body := range []any{map[string]any{}, nil} {
		q := e.admin(t, "POST", "/quotes", map[string]any{"client_name": "Cliente", "status": "approved",
			"items": []map[string]any{{"description": "Cabo", "quantity": 2, "unit_price_cents": 1000, "total_cents": 2000}}})
		if q["payment_plan"] != nil {
			t.Fatalf("the quote has a plan: %v", q["payment_plan"])
		}
		r := e.As(t, key, "POST", "/quotes/"+q["id"].(string)+"/convert_to_sale", body)
		if r.Status != 201 {
			t.Fatalf("convert with %v: %d %s", body, r.Status, r.Raw)
		}
		plan := r.Body["payment_plan"].(map[string]any)
		if plan["mode"] != "paid_full" || plan["paid_at"] != r.Body["sale_date"] || r.Body["payment_status"] != "paid" ||
			saleNum(r.Body["paid_cents"]) != 2000 || len(saleList(r.Body, "payments")) != 1 {
			t.Errorf("converted with %v: %s", body, r.Raw)
		}
	}
}
