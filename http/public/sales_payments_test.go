package public_test

import (
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"slices"
	"sync"
	"testing"
)

// 3.2 and 4.4: payments move payment_status pending → partial → paid and
// paid_cents with them; each yields sale.payment_registered (and
// sale.updated), reaching a zero balance yields sale.paid; the amount
// cannot exceed the balance; installment_id must be an open installment,
// otherwise payments go in due-date order.
func TestSaleReceivePayments(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	e.account(t, "Banco", true)
	s := e.sale(t, customSale(9000, map[string]any{"mode": "installments",
		"installments": installmentsBody("2099-03-01", 3000, "2099-01-01", 3000, "2099-02-01", 3000)}))
	id := s["id"].(string)
	inst := saleList(s, "installments") // due-date order: Jan, Feb, Mar
	e.events(t)
	pay := func(body map[string]any) map[string]any { return e.ok(t, "POST", "/sales/"+id+"/payments", body) }

	// Without installment_id: due-date order, spilling into the next one.
	s = pay(map[string]any{"amount_cents": 4000, "paid_at": "2026-05-01", "payment_method": "pix"})
	got := saleList(s, "installments")
	if s["payment_status"] != "partial" || saleNum(s["paid_cents"]) != 4000 || saleNum(s["remaining_cents"]) != 5000 ||
		got[0]["status"] != "paid" || got[0]["paid_date"] != "2026-05-01" || saleNum(got[1]["paid_cents"]) != 1000 ||
		saleNum(got[1]["remaining_cents"]) != 2000 || saleNum(got[2]["paid_cents"]) != 0 {
		t.Fatalf("after first payment: %s", mustJSON(t, s))
	}
	if p := saleList(s, "payments")[0]; saleNum(p["amount_cents"]) != 4000 || p["paid_at"] != "2026-05-01" || p["payment_method"] != "pix" ||
		p["canceled_at"] != nil || p["receipt_number"] != nil || p["has_active_invoice"] != false {
		t.Errorf("payment: %v", p)
	}
	if types := testkit.Types(e.events(t)); !slices.Equal(types, []string{"financial_transaction.created", "financial_transaction.updated",
		"financial_transaction.updated", "sale.payment_registered", "sale.updated"}) {
		t.Errorf("events of a partial payment: %v", types)
	}
	// With installment_id: that installment only.
	s = pay(map[string]any{"amount_cents": 3000, "paid_at": "2026-05-02", "installment_id": inst[2]["id"]})
	if got := saleList(s, "installments"); got[2]["status"] != "paid" || saleNum(got[1]["remaining_cents"]) != 2000 {
		t.Fatalf("targeted payment: %s", mustJSON(t, got))
	}
	e.events(t)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		errors string
	}{
		{"above the balance", map[string]any{"amount_cents": 2001, "paid_at": "2026-05-03"}, 422, "amount_cents:exceeds_balance"},
		{"above the installment", map[string]any{"amount_cents": 2001, "paid_at": "2026-05-03", "installment_id": inst[1]["id"]}, 422, "amount_cents:exceeds_balance"},
		{"installment already paid", map[string]any{"amount_cents": 1, "paid_at": "2026-05-03", "installment_id": inst[0]["id"]}, 409, ""},
		{"unknown installment", map[string]any{"amount_cents": 1, "paid_at": "2026-05-03", "installment_id": "ins_00000000000000000000000000"}, 404, ""},
		{"missing fields", map[string]any{}, 422, "amount_cents:required,paid_at:required"},
		{"timestamp as paid_at", map[string]any{"amount_cents": 1, "paid_at": "2026-05-03T10:00:00Z"}, 422, "paid_at:invalid_date"},
		{"unknown method", map[string]any{"amount_cents": 1, "paid_at": "2026-05-03", "payment_method": "cheque"}, 422, "payment_method:invalid_value"},
		{"zero", map[string]any{"amount_cents": 0, "paid_at": "2026-05-03"}, 422, "amount_cents:out_of_range"},
	} {
		r := e.Do(t, "POST", "/sales/"+id+"/payments", tc.body)
		if r.Status != tc.status || (tc.errors != "" && saleFieldErrors(r) != tc.errors) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if evs := e.events(t); len(evs) != 0 {
		t.Errorf("refused payments recorded %v", testkit.Types(evs))
	}
	s = pay(map[string]any{"amount_cents": 2000, "paid_at": "2026-05-04"})
	if s["payment_status"] != "paid" || saleNum(s["paid_cents"]) != 9000 || saleNum(s["remaining_cents"]) != 0 || len(saleList(s, "payments")) != 3 {
		t.Fatalf("paid: %s", mustJSON(t, s))
	}
	var saleTypes []string
	for _, ev := range e.events(t) {
		if ev.Type == "sale.paid" || ev.Type == "sale.payment_registered" || ev.Type == "sale.updated" {
			saleTypes = append(saleTypes, ev.Type)
			if ev.Data.Object["payment_status"] != "paid" {
				t.Errorf("%s object: %v", ev.Type, ev.Data.Object["payment_status"])
			}
		}
	}
	if !slices.Equal(saleTypes, []string{"sale.paid", "sale.payment_registered", "sale.updated"}) {
		t.Errorf("events of the last payment: %v", saleTypes)
	}
	if r := e.Do(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 1, "paid_at": "2026-05-05"}); r.Status != 422 {
		t.Errorf("payment on a paid sale: %d %s", r.Status, r.Raw)
	}
	// Finance: every receivable settled, received transactions add to paid_cents.
	var received int64
	for _, x := range saleList(e.ok(t, "GET", "/sales/"+id, nil), "finance_transactions") {
		switch x["status"] {
		case "paid":
			received += saleNum(x["amount_cents"])
		case "settled":
		default:
			t.Errorf("transaction left %v: %v", x["status"], x)
		}
	}
	if received != 9000 {
		t.Errorf("received %d", received)
	}
}

// 4.4: a payment choosing an account needs finance:read and finance:create
// on the key and member finance access; without one the sale's account is
// used.
func TestSalePaymentAccountPermissions(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	def := e.account(t, "Banco", true)
	cash := e.account(t, "Caixa", false)
	s := e.sale(t, customSale(2000, map[string]any{"mode": "installments", "installments": installmentsBody("2099-01-01", 2000)}))
	path := "/sales/" + s["id"].(string) + "/payments"
	fin := e.saleMember(t, true)
	body := map[string]any{"amount_cents": 500, "paid_at": "2026-06-01", "account_id": cash}
	for _, tc := range []struct {
		name  string
		perms []string
		code  string
	}{
		{"no finance:read", []string{"finance:create"}, "permission_missing"},
		{"no finance:create", []string{"finance:read"}, "permission_missing"},
	} {
		r := e.As(t, e.Co.Key(t, fin, append(slices.Clone(salePerms), tc.perms...)...).Secret, "POST", path, body)
		if r.Status != 403 || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	r := e.As(t, e.Co.Key(t, e.saleMember(t, false), append(slices.Clone(salePerms), "finance:read", "finance:create")...).Secret, "POST", path, body)
	if r.Status != 403 || r.ErrorCode() != "member_permission_denied" {
		t.Errorf("member without finance access: %d %s", r.Status, r.Raw)
	}
	e.ok(t, "POST", path, body)
	e.As(t, e.Co.Key(t, e.saleMember(t, false), salePerms...).Secret, "POST", path, map[string]any{"amount_cents": 500, "paid_at": "2026-06-01"})
	accounts := map[string]int64{}
	for _, x := range saleList(e.ok(t, "GET", "/sales/"+s["id"].(string), nil), "finance_transactions") {
		if x["status"] == "paid" {
			accounts[x["account_id"].(string)] += saleNum(x["amount_cents"])
		}
	}
	if accounts[cash] != 500 || accounts[def] != 500 {
		t.Errorf("received by account: %v", accounts)
	}
}

// 3.2 and 4.4: reversing a payment needs a reason, takes it back off its
// installments, and is 409 when already reversed or with an active invoice
// (an admin action that changes has_active_invoice without an event).
func TestSaleReversePayment(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	e.account(t, "Banco", true)
	s := e.sale(t, customSale(6000, map[string]any{"mode": "installments", "installments": installmentsBody("2099-01-01", 3000, "2099-02-01", 3000)}))
	id := s["id"].(string)
	s = e.ok(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 6000, "paid_at": "2026-06-01"})
	payID := saleList(s, "payments")[0]["id"].(string)
	cancel := "/sales/" + id + "/payments/" + payID + "/cancel"
	if r := e.Do(t, "POST", cancel, map[string]any{}); r.Status != 422 || saleFieldErrors(r) != "reason:required" {
		t.Errorf("without reason: %d %s", r.Status, r.Raw)
	}
	e.events(t)
	before := e.ok(t, "GET", "/sales/"+id, nil)
	inv := e.admin(t, "POST", "/sales/"+id+"/invoices", map[string]any{"payment_id": payID})
	got := e.ok(t, "GET", "/sales/"+id, nil)
	if saleList(got, "payments")[0]["has_active_invoice"] != true || got["invoice_locked"] != true {
		t.Fatalf("invoice flags: %s", mustJSON(t, got))
	}
	// Apart from the two flags, the sale reads as before (its copy of the
	// payments was rebuilt from the tables).
	got["invoice_locked"] = false
	saleList(got, "payments")[0]["has_active_invoice"] = false
	if !sameObject(t, got, before) {
		t.Errorf("invoice changed more than its flags:\n%s\n%s", mustJSON(t, got), mustJSON(t, before))
	}
	e.ok(t, "GET", "/sales/"+id, nil)
	if evs := e.events(t); len(evs) != 0 {
		t.Errorf("invoice issue yielded %v", testkit.Types(evs))
	}
	if r := e.Do(t, "POST", cancel, map[string]any{"reason": "estorno"}); r.Status != 409 {
		t.Errorf("with an active invoice: %d %s", r.Status, r.Raw)
	}
	e.admin(t, "POST", "/invoices/"+inv["id"].(string)+"/cancel", nil)
	if evs := e.events(t); len(evs) != 0 {
		t.Errorf("invoice cancel yielded %v", testkit.Types(evs))
	}
	s = e.ok(t, "POST", cancel, map[string]any{"reason": "estorno"})
	p := saleList(s, "payments")[0]
	if p["canceled_at"] == nil || p["cancel_reason"] != "estorno" || s["payment_status"] != "pending" || saleNum(s["paid_cents"]) != 0 {
		t.Fatalf("after reversal: %s", mustJSON(t, s))
	}
	for _, n := range saleList(s, "installments") {
		if n["status"] != "open" || saleNum(n["paid_cents"]) != 0 || n["paid_date"] != nil {
			t.Errorf("installment after reversal: %v", n)
		}
	}
	evs := e.events(t)
	if !slices.Contains(testkit.Types(evs), "sale.updated") || slices.Contains(testkit.Types(evs), "sale.paid") {
		t.Errorf("reversal events: %v", testkit.Types(evs))
	}
	for _, x := range saleList(e.ok(t, "GET", "/sales/"+id, nil), "finance_transactions") {
		if x["payment_id"] == payID && x["status"] != "canceled" {
			t.Errorf("received transaction not canceled: %v", x)
		}
		if x["installment_id"] != nil && x["payment_id"] == nil && x["status"] != "open" {
			t.Errorf("receivable not reopened: %v", x)
		}
	}
	if r := e.Do(t, "POST", cancel, map[string]any{"reason": "de novo"}); r.Status != 409 {
		t.Errorf("already reversed: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "POST", "/sales/"+id+"/payments/pay_00000000000000000000000000/cancel", map[string]any{"reason": "x"}); r.Status != 404 {
		t.Errorf("unknown payment: %d %s", r.Status, r.Raw)
	}
}

// 3.2 and 4.4: two payments racing for the last balance — the sale row is
// locked FOR UPDATE, so exactly one succeeds and the other sees the new
// balance (422 exceeds_balance); nothing is paid twice.
func TestSaleConcurrentPaymentsForTheLastBalance(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	e.account(t, "Banco", true)
	for round := range 4 {
		s := e.sale(t, customSale(5000, map[string]any{"mode": "installments", "installments": installmentsBody("2099-01-01", 5000)}))
		path := "/sales/" + s["id"].(string) + "/payments"
		e.ok(t, "POST", path, map[string]any{"amount_cents": 4000, "paid_at": "2026-06-01"})
		start := make(chan struct{})
		results := make(chan *httpkit.Response, 2)
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results <- e.Do(t, "POST", path, map[string]any{"amount_cents": 1000, "paid_at": "2026-06-02"})
			}()
		}
		close(start)
		wg.Wait()
		close(results)
		var statuses []int
		for r := range results {
			statuses = append(statuses, r.Status)
			if r.Status == 422 && saleFieldErrors(r) != "amount_cents:exceeds_balance" {
				t.Errorf("round %d: loser %s", round, r.Raw)
			}
		}
		slices.Sort(statuses)
		if !slices.Equal(statuses, []int{200, 422}) {
			t.Fatalf("round %d: statuses %v", round, statuses)
		}
		got := e.ok(t, "GET", "/sales/"+s["id"].(string), nil)
		if saleNum(got["paid_cents"]) != 5000 || got["payment_status"] != "paid" || len(saleList(got, "payments")) != 2 {
			t.Fatalf("round %d: %s", round, mustJSON(t, got))
		}
	}
}
