package public_test

import (
	"slices"
	"testing"

	"oficina/ops/testkit"
)

// Spec 6.3 rule 2 and 6.4: reversing a payment records sale.updated and
// sale.payment_canceled; cancelling a sale records sale.updated, one
// sale.payment_canceled per payment it reversed, and sale.canceled, each
// beside the finance events of the entries they moved.
func TestSaleReversalAndCancelRecordTheirEvents(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	e.account(t, "Banco", true)
	s := e.sale(t, customSale(9000, map[string]any{"mode": "installments",
		"installments": installmentsBody("2099-01-01", 3000, "2099-02-01", 3000, "2099-03-01", 3000)}))
	id := s["id"].(string)
	e.ok(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 3000, "paid_at": "2026-01-05"})
	s = e.ok(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 2000, "paid_at": "2026-01-06"})
	pays := saleList(s, "payments")
	e.events(t)

	s = e.ok(t, "POST", "/sales/"+id+"/payments/"+pays[1]["id"].(string)+"/cancel", map[string]any{"reason": "bounced"})
	got := testkit.Types(e.events(t))
	if !slices.Equal(got, []string{"financial_transaction.updated", "financial_transaction.updated", "sale.payment_canceled", "sale.updated"}) {
		t.Errorf("reversal: %v", got)
	}
	if saleNum(s["paid_cents"]) != 3000 {
		t.Errorf("paid after reversal: %v", s["paid_cents"])
	}

	e.ok(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 1000, "paid_at": "2026-01-07"})
	e.events(t)
	e.ok(t, "POST", "/sales/"+id+"/cancel", map[string]any{"reason": "gave up"}) // two active payments
	evs := e.events(t)
	var sale []string
	for _, ev := range evs {
		if ev.Type != "financial_transaction.updated" {
			sale = append(sale, ev.Type)
		}
		if ev.Type == "sale.canceled" && ev.Data.Object["canceled_at"] == nil {
			t.Errorf("sale.canceled without canceled_at: %v", ev.Data.Object)
		}
	}
	if !slices.Equal(sale, []string{"sale.canceled", "sale.payment_canceled", "sale.payment_canceled", "sale.updated"}) {
		t.Errorf("cancel: %v", testkit.Types(evs))
	}
	if r := e.Do(t, "POST", "/sales/"+id+"/cancel", map[string]any{"reason": "again"}); r.Status != 409 {
		t.Errorf("second cancel: %d", r.Status)
	}
	if len(e.events(t)) != 0 {
		t.Error("a refused cancel recorded events")
	}
}
