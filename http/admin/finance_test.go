package admin_test

import (
	"oficina/ops/testkit/httpkit"
	"slices"
	"testing"
)

// Spec 5.4, 6.3 and 6.4: a manual entry records
// financial_transaction.created; mark_paid records
// financial_transaction.updated (changed_fields) and
// financial_transaction.paid; marking it paid again is 409; deleting it
// records financial_transaction.deleted with the entry as it was.
func TestFinanceEntryMarkPaidAndDeleteRecordEvents(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	d.ok(t, 201, "POST", "/finance_accounts", map[string]any{"name": "Banco"})
	e := d.ok(t, 201, "POST", "/financial_transactions", map[string]any{"kind": "expense", "description": "Aluguel",
		"amount_cents": 150000, "transaction_date": "2026-02-01", "due_date": "2026-02-05"})
	id := e["id"].(string)
	if e["status"] != "open" || e["account_id"] == nil || e["payment_date"] != nil {
		t.Fatalf("created %v", e)
	}
	d.expectEvents(t, "create", "financial_transaction.created")

	p := d.ok(t, 200, "POST", "/financial_transactions/"+id+"/mark_paid", map[string]any{"payment_date": "2026-02-04"})
	if p["status"] != "paid" || p["payment_date"] != "2026-02-04" {
		t.Fatalf("paid %v", p)
	}
	f := d.expectEvents(t, "mark_paid", "financial_transaction.paid", "financial_transaction.updated")
	if !slices.Equal(f["financial_transaction.updated"], []string{"payment_date", "status"}) {
		t.Errorf("changed_fields %v", f["financial_transaction.updated"])
	}
	if r := d.do(t, "POST", "/financial_transactions/"+id+"/mark_paid", map[string]any{}); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Errorf("paid twice: %d %s", r.Status, r.Raw)
	}
	if r := d.do(t, "DELETE", "/financial_transactions/"+id, nil); r.Status != 200 || r.Body["deleted"] != true {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	evs := d.log.Next(t)
	if len(evs) != 1 || evs[0].Type != "financial_transaction.deleted" || evs[0].Data.Object["status"] != "paid" {
		t.Errorf("delete events %+v", evs)
	}
	if r := d.do(t, "GET", "/financial_transactions/"+id, nil); r.Status != 404 {
		t.Errorf("after delete: %d", r.Status)
	}
	for _, body := range []map[string]any{{"kind": "gift", "amount_cents": 1}, {"kind": "income"}, {"kind": "income", "amount_cents": 0}} {
		if r := d.do(t, "POST", "/financial_transactions", body); r.Status != 422 {
			t.Errorf("%v: %d %s", body, r.Status, r.Raw)
		}
	}
}

// Spec 7 and 5.4: deleting an entry of a sale is 409, marking paid an entry
// that is canceled is 409, and marking a sale's installment paid records
// the sale payment (sale.payment_registered, the receivable settled, a
// received entry) rather than financial_transaction.paid.
func TestSaleEntriesInFinance(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	d.ok(t, 201, "POST", "/finance_accounts", map[string]any{"name": "Banco"})
	sale := d.ok(t, 201, "POST", "/sales", map[string]any{"sale_date": "2026-01-01",
		"items": []map[string]any{{"type": "custom", "name": "Serviço", "unit_price_cents": 6000}},
		"payment_plan": map[string]any{"mode": "installments", "installments": []map[string]any{
			{"due_date": "2099-01-01", "amount_cents": 3000}, {"due_date": "2099-02-01", "amount_cents": 3000}}}})
	saleID := sale["id"].(string)
	entries := sale["finance_transactions"].([]any)
	if len(entries) != 2 {
		t.Fatalf("entries %v", entries)
	}
	first, second := entries[0].(map[string]any)["id"].(string), entries[1].(map[string]any)["id"].(string)
	d.events(t)

	if r := d.do(t, "DELETE", "/financial_transactions/"+first, nil); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Errorf("delete a sale entry: %d %s", r.Status, r.Raw)
	}
	p := d.ok(t, 200, "POST", "/financial_transactions/"+first+"/mark_paid", map[string]any{"payment_date": "2026-01-10",
		"payment_method": "pix"})
	if p["status"] != "settled" || p["amount_cents"] != 0.0 {
		t.Errorf("receivable after mark_paid: %v", p)
	}
	d.expectEvents(t, "mark_paid on a sale installment", "financial_transaction.created", "financial_transaction.updated",
		"sale.payment_registered", "sale.updated")
	s := d.ok(t, 200, "GET", "/sales/"+saleID, nil)
	pays := s["payments"].([]any)
	if s["paid_cents"] != 3000.0 || len(pays) != 1 || pays[0].(map[string]any)["payment_method"] != "pix" ||
		pays[0].(map[string]any)["paid_at"] != "2026-01-10" {
		t.Errorf("sale after mark_paid: paid %v, payments %v", s["paid_cents"], pays)
	}
	if r := d.do(t, "POST", "/financial_transactions/"+first+"/mark_paid", map[string]any{}); r.Status != 409 {
		t.Errorf("settled again: %d %s", r.Status, r.Raw)
	}

	cancelSale(t, d, saleID)
	d.events(t)
	if r := d.do(t, "POST", "/financial_transactions/"+second+"/mark_paid", map[string]any{}); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Errorf("mark_paid a canceled entry: %d %s", r.Status, r.Raw)
	}
	d.expectEvents(t, "refused mark_paid")
}

// cancelSale cancels a sale through the public API.
func cancelSale(t *testing.T, d *dash, saleID string) {
	t.Helper()
	key := d.co.OwnerKey(t, "sales:update")
	if r := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/sales/" + saleID + "/cancel", Key: key,
		Body: map[string]any{"reason": "gave up"}}); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
}
