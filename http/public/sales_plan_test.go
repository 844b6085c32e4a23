package public_test

import (
	"slices"
	"testing"
)

// 4.4, payment plan rules 1-5, and 3.2's initial states: every mode, its
// bounds, the 1-cent tolerance absorbed by the last installment, and the
// plan always rendered with its six fields.
func TestSalePaymentPlanRules(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	client := e.client(t)
	for _, tc := range []struct {
		name     string
		total    int64
		plan     map[string]any
		client   bool
		status   int
		errors   string
		state    string
		paid     int64
		amounts  []int64 // installment amounts as stored
		planInst []int64 // plan.installments as stored (nil: null)
	}{
		{name: "paid_full starts paid", total: 10000, plan: map[string]any{"mode": "paid_full", "payment_method": "pix", "paid_at": "2026-01-05"},
			status: 201, state: "paid", paid: 10000, amounts: []int64{10000}},
		{name: "entry_and_rest", total: 10000, plan: map[string]any{"mode": "entry_and_rest", "entry_amount_cents": 4000,
			"installments": installmentsBody("2026-02-01", 3000, "2026-03-01", 3000)},
			status: 201, state: "partial", paid: 4000, amounts: []int64{4000, 3000, 3000}, planInst: []int64{3000, 3000}},
		{name: "entry of zero", total: 10000, plan: map[string]any{"mode": "entry_and_rest", "entry_amount_cents": 0,
			"installments": installmentsBody("2026-02-01", 10000)}, status: 422, errors: "payment_plan.entry_amount_cents:out_of_range"},
		{name: "entry of the whole total", total: 10000, plan: map[string]any{"mode": "entry_and_rest", "entry_amount_cents": 10000,
			"installments": installmentsBody("2026-02-01", 1)}, status: 422, errors: "payment_plan.entry_amount_cents:out_of_range"},
		{name: "rest not covered", total: 10000, plan: map[string]any{"mode": "entry_and_rest", "entry_amount_cents": 4000,
			"installments": installmentsBody("2026-02-01", 5000)}, status: 422, errors: "payment_plan.installments:amount_mismatch"},
		{name: "installments add to the total", total: 9000, plan: map[string]any{"mode": "installments",
			"installments": installmentsBody("2026-02-01", 3000, "2026-03-01", 3000, "2026-04-01", 3000)},
			status: 201, state: "pending", amounts: []int64{3000, 3000, 3000}, planInst: []int64{3000, 3000, 3000}},
		{name: "one cent short is absorbed by the last", total: 10000, plan: map[string]any{"mode": "installments",
			"installments": installmentsBody("2026-02-01", 3333, "2026-03-01", 3333, "2026-04-01", 3333)},
			status: 201, state: "pending", amounts: []int64{3333, 3333, 3334}, planInst: []int64{3333, 3333, 3334}},
		{name: "one cent over is absorbed by the last", total: 9998, plan: map[string]any{"mode": "installments",
			"installments": installmentsBody("2026-02-01", 3333, "2026-03-01", 3333, "2026-04-01", 3333)},
			status: 201, state: "pending", amounts: []int64{3333, 3333, 3332}, planInst: []int64{3333, 3333, 3332}},
		{name: "two cents off", total: 10001, plan: map[string]any{"mode": "installments",
			"installments": installmentsBody("2026-02-01", 3333, "2026-03-01", 3333, "2026-04-01", 3333)},
			status: 422, errors: "payment_plan.installments:amount_mismatch"},
		{name: "installments without a list", total: 100, plan: map[string]any{"mode": "installments"}, status: 422,
			errors: "payment_plan.installments:required"},
		{name: "unpaid requires a client", total: 5000, plan: map[string]any{"mode": "unpaid",
			"installments": installmentsBody("2026-02-01", 5000)}, status: 422, errors: "client_id:required"},
		{name: "unpaid with a client", total: 5000, client: true, plan: map[string]any{"mode": "unpaid",
			"installments": installmentsBody("2026-02-01", 5000)}, status: 201, state: "pending", amounts: []int64{5000}, planInst: []int64{5000}},
		{name: "paid_full takes no installments", total: 100, plan: map[string]any{"mode": "paid_full",
			"installments": installmentsBody("2026-02-01", 100)}, status: 422, errors: "payment_plan.installments:not_allowed"},
		{name: "unknown mode and method", total: 100, plan: map[string]any{"mode": "later", "payment_method": "cheque"}, status: 422,
			errors: "payment_plan.mode:invalid_value,payment_plan.payment_method:invalid_value"},
		{name: "installment without due date", total: 100, plan: map[string]any{"mode": "installments",
			"installments": []map[string]any{{"amount_cents": 100}}}, status: 422, errors: "payment_plan.installments[0].due_date:required"},
	} {
		body := customSale(tc.total, tc.plan)
		if tc.client {
			body["client_id"] = client
		}
		r := e.Do(t, "POST", "/sales", body)
		if r.Status != tc.status || (tc.errors != "" && saleFieldErrors(r) != tc.errors) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
			continue
		}
		if r.Status != 201 {
			continue
		}
		s := r.Body
		if s["payment_status"] != tc.state || saleNum(s["paid_cents"]) != tc.paid || saleNum(s["remaining_cents"]) != tc.total-tc.paid {
			t.Errorf("%s: state %v paid %v", tc.name, s["payment_status"], s["paid_cents"])
		}
		var amounts []int64
		var sum, remaining int64
		for _, n := range saleList(s, "installments") {
			amounts = append(amounts, saleNum(n["amount_cents"]))
			sum += saleNum(n["amount_cents"])
			remaining += saleNum(n["remaining_cents"])
		}
		if !slices.Equal(amounts, tc.amounts) || sum != tc.total || remaining != tc.total-tc.paid {
			t.Errorf("%s: installments %v", tc.name, amounts)
		}
		plan := s["payment_plan"].(map[string]any)
		if len(plan) != 6 {
			t.Errorf("%s: plan has %d fields: %v", tc.name, len(plan), plan)
		}
		for _, k := range []string{"mode", "payment_method", "account_id", "paid_at", "entry_amount_cents", "installments"} {
			if _, ok := plan[k]; !ok {
				t.Errorf("%s: plan lacks %s", tc.name, k)
			}
		}
		var planInst []int64
		for _, n := range saleList(plan, "installments") {
			planInst = append(planInst, saleNum(n["amount_cents"]))
		}
		if !slices.Equal(planInst, tc.planInst) || (tc.planInst == nil && plan["installments"] != nil) {
			t.Errorf("%s: plan installments %v", tc.name, plan["installments"])
		}
		if len(saleList(s, "payments")) != map[bool]int{true: 1, false: 0}[tc.paid > 0] {
			t.Errorf("%s: payments %v", tc.name, s["payments"])
		}
	}
}
