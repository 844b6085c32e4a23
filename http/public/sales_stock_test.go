package public_test

import (
	"testing"

	"oficina/ops/testkit"
)

// 2.6, 4.4 and 3.2: catalog items deduct stock through ledger movements
// (stock.changed each) without products:update; decrement_stock: false
// deducts nothing; cancelling returns exactly what was deducted.
func TestSaleStockDeductionAndReturn(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	chair := e.product(t, map[string]any{"name": "Cadeira", "price_cents": 1000, "stock_quantity": 10})
	shirt := e.product(t, map[string]any{"name": "Camisa", "price_cents": 500, "variations": []map[string]any{{"name": "M", "stock_quantity": 4}}})
	sizeM := saleList(shirt, "variations")[0]["id"].(string)
	e.events(t)
	key := e.Co.OwnerKey(t, "sales:create", "sales:update") // no products:* at all
	body := map[string]any{"items": []map[string]any{
		{"type": "catalog", "product_id": chair["id"], "quantity": 3},
		{"type": "catalog", "product_id": chair["id"], "quantity": 1},
		{"type": "catalog", "product_id": shirt["id"], "variation_id": sizeM, "quantity": 2},
		{"type": "custom", "name": "Frete especial", "unit_price_cents": 100},
	}, "payment_plan": map[string]any{"mode": "paid_full"}}
	r := e.As(t, key, "POST", "/sales", body)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	saleID := r.Body["id"].(string)
	stock := func(id string) int64 { return saleNum(e.admin(t, "GET", "/products/"+id, nil)["stock_quantity"]) }
	if stock(chair["id"].(string)) != 6 || stock(shirt["id"].(string)) != 2 {
		t.Fatalf("stock after sale: %d %d", stock(chair["id"].(string)), stock(shirt["id"].(string)))
	}
	var moves []map[string]any
	for _, ev := range e.events(t) {
		if ev.Type == "stock.changed" {
			moves = append(moves, ev.Data.Object)
		}
	}
	if len(moves) != 2 {
		t.Fatalf("stock.changed: %v", moves)
	}
	byProduct := map[any]map[string]any{}
	for _, m := range moves {
		byProduct[m["product_id"]] = m
		if m["object"] != "stock_movement" || m["reason"] != "sale" || m["sale_id"] != saleID {
			t.Errorf("movement: %v", m)
		}
	}
	if m := byProduct[chair["id"]]; saleNum(m["quantity"]) != -4 || saleNum(m["balance_after"]) != 6 || m["variation_id"] != nil {
		t.Errorf("chair movement: %v", m)
	}
	if m := byProduct[shirt["id"]]; saleNum(m["quantity"]) != -2 || m["variation_id"] != sizeM {
		t.Errorf("shirt movement: %v", m)
	}

	body["decrement_stock"] = false
	if r := e.As(t, key, "POST", "/sales", body); r.Status != 201 {
		t.Fatalf("without stock: %d %s", r.Status, r.Raw)
	}
	if stock(chair["id"].(string)) != 6 {
		t.Errorf("decrement_stock false moved stock")
	}
	for _, ev := range e.events(t) {
		if ev.Type == "stock.changed" {
			t.Errorf("decrement_stock false: %v", ev)
		}
	}

	if r := e.As(t, key, "POST", "/sales/"+saleID+"/cancel", map[string]any{"reason": "desistência"}); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	if stock(chair["id"].(string)) != 10 || stock(shirt["id"].(string)) != 4 {
		t.Errorf("stock after cancel: %d %d", stock(chair["id"].(string)), stock(shirt["id"].(string)))
	}
	returned := 0
	for _, ev := range e.events(t) {
		if ev.Type == "stock.changed" {
			returned++
			if ev.Data.Object["reason"] != "sale_canceled" || saleNum(ev.Data.Object["quantity"]) <= 0 {
				t.Errorf("return movement: %v", ev.Data.Object)
			}
		}
	}
	if returned != 2 {
		t.Errorf("%d return movements", returned)
	}
}

// 6.3 rule 7: deleting a product clears product_id (and variation_id) on
// sale items and deletes its stock movements, yielding only
// product.deleted — no sale.updated, no stock.changed.
func TestDeleteProductClearsSaleItemsAndMovements(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	p := e.product(t, map[string]any{"name": "Vaso", "price_cents": 700, "variations": []map[string]any{{"name": "Azul", "stock_quantity": 5}}})
	s := e.sale(t, map[string]any{"items": []map[string]any{{"type": "catalog", "product_id": p["id"],
		"variation_id": saleList(p, "variations")[0]["id"]}}, "payment_plan": map[string]any{"mode": "paid_full"}})
	e.events(t)
	if r := e.API.Admin(t, "DELETE", "/companies/"+e.Co.Company.ID+"/products/"+p["id"].(string), nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	evs := e.events(t)
	if len(evs) != 1 || evs[0].Type != "product.deleted" || evs[0].Data.Object["id"] != p["id"] {
		t.Fatalf("events: %v", testkit.Types(evs))
	}
	item := saleList(e.ok(t, "GET", "/sales/"+s["id"].(string), nil), "items")[0]
	if item["product_id"] != nil || item["variation_id"] != nil || item["name"] != "Vaso - Azul" || item["type"] != "catalog" {
		t.Errorf("item after delete: %v", item)
	}
	if n := e.count(t, "SELECT count(*) FROM stock_movements"); n != 0 {
		t.Errorf("%d movements left", n)
	}
	// Cancelling now returns nothing (the ledger of that product is gone).
	e.ok(t, "POST", "/sales/"+s["id"].(string)+"/cancel", map[string]any{"reason": "x"})
	for _, ev := range e.events(t) {
		if ev.Type == "stock.changed" {
			t.Errorf("stock.changed after the product was deleted")
		}
	}
}

// 6.4: product and service edits yield product.updated / service.updated
// with changed_fields; an edit that changes nothing yields nothing.
func TestProductAndServiceEditsYieldUpdated(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	p := e.product(t, map[string]any{"name": "Mesa", "price_cents": 1000, "sku": "M-1"})
	sv := e.admin(t, "POST", "/services", map[string]any{"name": "Instalação", "base_price_cents": 5000})
	e.events(t)
	e.admin(t, "PATCH", "/products/"+p["id"].(string), map[string]any{"promotional_price_cents": 900})
	e.admin(t, "PATCH", "/services/"+sv["id"].(string), map[string]any{"base_price_cents": 5500})
	e.admin(t, "PATCH", "/products/"+p["id"].(string), map[string]any{"name": "Mesa"})
	evs := e.events(t)
	if len(evs) != 2 || evs[0].Type != "product.updated" || evs[1].Type != "service.updated" {
		t.Fatalf("events: %v", testkit.Types(evs))
	}
	if f := evs[0].Data.ChangedFields; len(f) != 1 || f[0] != "promotional_price_cents" {
		t.Errorf("product changed_fields: %v", f)
	}
	if f := evs[1].Data.ChangedFields; len(f) != 1 || f[0] != "base_price_cents" {
		t.Errorf("service changed_fields: %v", f)
	}
	// Part 7: a duplicate sku and a repeated variation name are conflicts.
	for name, body := range map[string]map[string]any{
		"duplicate sku":            {"name": "Outra", "price_cents": 1, "sku": "M-1"},
		"repeated variation name":  {"name": "Outra", "price_cents": 1, "variations": []map[string]any{{"name": "P"}, {"name": "p"}}},
		"sku of another variation": {"name": "Outra", "price_cents": 1, "variations": []map[string]any{{"name": "P", "sku": "M-1"}}},
	} {
		if r := e.API.Admin(t, "POST", "/companies/"+e.Co.Company.ID+"/products", body); r.Status != 409 {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
}

// 6.3 rule 7, by analogy: a variation dropped from its product in the
// dashboard unlinks the sale items that used it; the write yields only
// product.updated.
func TestDroppedVariationUnlinksSaleItems(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	p := e.product(t, map[string]any{"name": "Copo", "price_cents": 300, "variations": []map[string]any{{"name": "P", "stock_quantity": 3}, {"name": "G", "stock_quantity": 3}}})
	vs := saleList(p, "variations")
	s := e.sale(t, map[string]any{"items": []map[string]any{{"type": "catalog", "product_id": p["id"], "variation_id": vs[1]["id"]}},
		"payment_plan": map[string]any{"mode": "paid_full"}})
	e.events(t)
	e.admin(t, "PATCH", "/products/"+p["id"].(string), map[string]any{"variations": []map[string]any{{"id": vs[0]["id"], "name": "P"}}})
	if evs := e.events(t); len(evs) != 1 || evs[0].Type != "product.updated" {
		t.Fatalf("events: %v", testkit.Types(evs))
	}
	item := saleList(e.ok(t, "GET", "/sales/"+s["id"].(string), nil), "items")[0]
	if item["product_id"] != p["id"] || item["variation_id"] != nil || item["name"] != "Copo - G" {
		t.Errorf("item: %v", item)
	}
	if n := e.count(t, "SELECT count(*) FROM stock_movements WHERE variation_id = ?", vs[1]["id"]); n != 0 {
		t.Errorf("%d movements of the dropped variation", n)
	}
}
