package public_test

import (
	"context"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
)

// Part 1 and 4.4: a sale created through the API follows the sales screen:
// the company's next number, totals computed from items, discount, shipping
// and additional costs; catalog items take name and promotional price from
// the product; the response is what GET returns; sale.created carries it.
func TestSaleCreationAsTheSalesScreen(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	promo := e.product(t, map[string]any{"name": "Cadeira", "price_cents": 20000, "promotional_price_cents": 15000, "stock_quantity": 10})
	plain := e.product(t, map[string]any{"name": "Mesa", "price_cents": 50000, "stock_quantity": 3})
	body := map[string]any{
		"items": []map[string]any{
			{"type": "catalog", "product_id": promo["id"], "quantity": 2},
			{"type": "catalog", "product_id": plain["id"]},
			{"type": "custom", "name": "Montagem", "unit_price_cents": 3000, "quantity": 3},
		},
		"discount_cents": 1000, "shipping_cents": 2500, "additional_costs_cents": 500,
		"sale_date": "2026-03-10", "notes": "entregar à tarde",
		"payment_plan": map[string]any{"mode": "installments", "payment_method": "boleto",
			"installments": installmentsBody("2026-04-10", 45500, "2026-05-10", 45500)},
	}
	first := e.sale(t, body)
	second := e.sale(t, body)
	if saleNum(first["number"]) != 1 || saleNum(second["number"]) != 2 || first["id"] == second["id"] {
		t.Fatalf("numbers: %v %v", first["number"], second["number"])
	}
	// 2×15000 + 50000 + 3×3000 = 89000; − 1000 + 2500 + 500 = 91000.
	if saleNum(first["subtotal_cents"]) != 89000 || saleNum(first["total_cents"]) != 91000 {
		t.Fatalf("totals: %s", mustJSON(t, first))
	}
	items := saleList(first, "items")
	want := []struct {
		typ, name            string
		qty, unit, orig, tot int64
	}{{"catalog", "Cadeira", 2, 15000, 20000, 30000}, {"catalog", "Mesa", 1, 50000, 50000, 50000}, {"custom", "Montagem", 3, 3000, 3000, 9000}}
	for i, w := range want {
		it := items[i]
		if it["type"] != w.typ || it["name"] != w.name || saleNum(it["quantity"]) != w.qty || saleNum(it["unit_price_cents"]) != w.unit ||
			saleNum(it["original_price_cents"]) != w.orig || saleNum(it["total_price_cents"]) != w.tot {
			t.Errorf("item %d: %v", i, it)
		}
	}
	if first["payment_status"] != "pending" || saleNum(first["paid_cents"]) != 0 || saleNum(first["version"]) != 1 || first["sale_date"] != "2026-03-10" {
		t.Errorf("state: %s", mustJSON(t, first))
	}
	get := e.ok(t, "GET", "/sales/"+first["id"].(string), nil)
	if !sameObject(t, get, first) {
		t.Errorf("GET differs from the creation response:\n%s\n%s", mustJSON(t, get), mustJSON(t, first))
	}
	// The copy of the children on the sale row, rebuilt from the child
	// tables, reads the same.
	e.Co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "SELECT oficina_sale_refresh_docs(?)", first["id"])
		return err
	})
	if again := e.ok(t, "GET", "/sales/"+first["id"].(string), nil); !sameObject(t, again, get) {
		t.Errorf("rebuilt documents differ:\n%s\n%s", mustJSON(t, again), mustJSON(t, get))
	}
	evs := e.events(t)
	var created []testkit.Event
	for _, ev := range evs {
		if ev.Type == "sale.created" {
			created = append(created, ev)
		}
	}
	if len(created) != 2 {
		t.Fatalf("events: %v", testkit.Types(evs))
	}
	obj := created[0].Data.Object
	if obj["id"] != first["id"] {
		obj = created[1].Data.Object
	}
	// The event carries the GET representation without the finance fields.
	delete(get, "account_id")
	delete(get, "finance_transactions")
	get["payment_plan"].(map[string]any)["account_id"] = nil
	if !sameObject(t, obj, get) {
		t.Errorf("event object differs from GET:\n%s\n%s", mustJSON(t, obj), mustJSON(t, get))
	}
}

// 2.6: totals are calculated by the service and never sent.
func TestSaleTotalsAreNeverSent(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	for _, field := range []string{"total_cents", "subtotal_cents", "paid_cents", "payment_status", "version"} {
		body := customSale(1000, map[string]any{"mode": "paid_full"})
		body[field] = 1000
		r := e.Do(t, "POST", "/sales", body)
		if r.Status != 422 || saleFieldErrors(r) != field+":unknown_field" {
			t.Errorf("%s: %d %s", field, r.Status, r.Raw)
		}
	}
	if n := e.count(t, "SELECT count(*) FROM sales"); n != 0 {
		t.Errorf("%d sales written", n)
	}
}

// 2.6: item rules — custom items send name and price; catalog items take
// them from the product, need variation_id when the product has
// variations, and a product or variation of another company is 404.
func TestSaleItemRules(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	other := newSaleEnv(t)
	shirt := e.product(t, map[string]any{"name": "Camisa", "price_cents": 5000, "variations": []map[string]any{
		{"name": "P", "price_cents": 5000, "promotional_price_cents": 4000, "stock_quantity": 5},
		{"name": "G", "price_cents": 6000, "stock_quantity": 5}}})
	sizeP := saleList(shirt, "variations")[0]["id"]
	mug := e.product(t, map[string]any{"name": "Caneca", "price_cents": 2000})
	foreign := other.product(t, map[string]any{"name": "Alheio", "price_cents": 100})
	foreignShirt := other.product(t, map[string]any{"name": "Alheia", "price_cents": 100, "variations": []map[string]any{{"name": "U"}}})
	plan := map[string]any{"mode": "paid_full"}
	sale := func(items ...map[string]any) map[string]any {
		return map[string]any{"items": items, "payment_plan": plan}
	}

	r := e.Do(t, "POST", "/sales", sale(map[string]any{"type": "catalog", "product_id": shirt["id"], "variation_id": sizeP, "quantity": 2}))
	if r.Status != 201 || saleList(r.Body, "items")[0]["name"] != "Camisa - P" || saleNum(saleList(r.Body, "items")[0]["unit_price_cents"]) != 4000 ||
		saleNum(r.Body["total_cents"]) != 8000 {
		t.Fatalf("variation item: %d %s", r.Status, r.Raw)
	}
	for _, tc := range []struct {
		name   string
		item   map[string]any
		status int
		errors string
	}{
		{"variation required", map[string]any{"type": "catalog", "product_id": shirt["id"]}, 422, "items[0].variation_id:required"},
		{"custom without name and price", map[string]any{"type": "custom"}, 422, "items[0].name:required,items[0].unit_price_cents:required"},
		{"catalog with a name or price", map[string]any{"type": "catalog", "product_id": mug["id"], "name": "x", "unit_price_cents": 1}, 422,
			"items[0].name:not_allowed,items[0].unit_price_cents:not_allowed"},
		{"catalog without product", map[string]any{"type": "catalog"}, 422, "items[0].product_id:required"},
		{"unknown type", map[string]any{"type": "bundle"}, 422, "items[0].type:invalid_value"},
		{"zero quantity", map[string]any{"type": "custom", "name": "x", "unit_price_cents": 1, "quantity": 0}, 422, "items[0].quantity:out_of_range"},
		{"fractional quantity", map[string]any{"type": "custom", "name": "x", "unit_price_cents": 1, "quantity": 1.5}, 422, "items[0].quantity:invalid_type"},
		{"product of another company", map[string]any{"type": "catalog", "product_id": foreign["id"]}, 404, ""},
		{"variation of another company", map[string]any{"type": "catalog", "product_id": shirt["id"],
			"variation_id": saleList(foreignShirt, "variations")[0]["id"]}, 404, ""},
		{"variation of another product", map[string]any{"type": "catalog", "product_id": mug["id"], "variation_id": sizeP}, 404, ""},
		{"malformed product id", map[string]any{"type": "catalog", "product_id": "prd_nope"}, 404, ""},
	} {
		r := e.Do(t, "POST", "/sales", sale(tc.item))
		if r.Status != tc.status || (tc.errors != "" && saleFieldErrors(r) != tc.errors) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if r := e.Do(t, "POST", "/sales", map[string]any{"payment_plan": plan}); r.Status != 422 || saleFieldErrors(r) != "items:required" {
		t.Errorf("no items: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "POST", "/sales", map[string]any{"items": []map[string]any{{"type": "custom", "name": "x", "unit_price_cents": 100}},
		"discount_cents": 101, "payment_plan": plan}); r.Status != 422 || saleFieldErrors(r) != "discount_cents:out_of_range" {
		t.Errorf("discount above the total: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "POST", "/sales", map[string]any{"items": []map[string]any{{"type": "custom", "name": "x", "unit_price_cents": 100}},
		"client_id": "cli_00000000000000000000000000", "payment_plan": plan}); r.Status != 404 {
		t.Errorf("unknown client: %d %s", r.Status, r.Raw)
	}
}

// 8 and 4.4: the monthly sale quota gives 403 plan_limit_reached, and the
// refused request writes nothing (no sale, no number, no event).
func TestSaleQuotaPlanLimitReached(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	settings := e.admin(t, "GET", "/sales_settings", nil)
	if settings["effective_monthly_quota"] != nil || settings["track_in_finance"] != true {
		t.Fatalf("supra defaults: %v", settings)
	}
	e.admin(t, "PATCH", "/sales_settings", map[string]any{"monthly_sale_quota": 2})
	body := customSale(1000, map[string]any{"mode": "paid_full"})
	a, b := e.sale(t, body), e.sale(t, body)
	e.events(t)
	r := e.Do(t, "POST", "/sales", body)
	if r.Status != 403 || r.ErrorCode() != "plan_limit_reached" {
		t.Fatalf("third sale: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "SELECT count(*) FROM sales"); n != 2 {
		t.Errorf("%d sales", n)
	}
	if evs := e.events(t); len(evs) != 0 {
		t.Errorf("refused sale recorded %v", testkit.Types(evs))
	}
	e.admin(t, "PATCH", "/sales_settings", map[string]any{"sale_quota_unlimited": true})
	c := e.sale(t, body)
	if ns := []int64{saleNum(a["number"]), saleNum(b["number"]), saleNum(c["number"])}; !slices.Equal(ns, []int64{1, 2, 3}) {
		t.Errorf("numbers after a refusal: %v", ns)
	}
}
