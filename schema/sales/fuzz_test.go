package sales_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/sales"
)

// FuzzCreateSaleRules feeds arbitrary sale requests through the creation
// rules that need no database (validation, custom item totals, the payment
// plan and its installments): nothing panics, and every refusal is an
// error of the catalogue, never an internal one. The requests are built
// from arbitrary JSON by encoding/json, which accepts more than the API's
// strict decoder (whose own fuzz target is in http/wire); what it cannot
// build is skipped.
func FuzzCreateSaleRules(f *testing.F) {
	for _, seed := range []string{
		`{"items":[{"type":"custom","name":"a","unit_price_cents":100}],"payment_plan":{"mode":"paid_full"}}`,
		`{"items":[{"type":"custom","name":"a","unit_price_cents":500,"quantity":2}],"discount_cents":100,"shipping_cents":50,
		  "payment_plan":{"mode":"entry_and_rest","entry_amount_cents":2000,"installments":[{"amount_cents":1,"due_date":"2026-01-01"}]}}`,
		`{"items":[{"type":"custom","name":"a","unit_price_cents":300}],
		  "payment_plan":{"mode":"installments","installments":[{"amount_cents":100,"due_date":"2026-01-01"},{"amount_cents":100,"due_date":"2026-01-01"}]}}`,
		`{"items":[{"type":"custom","name":"a","unit_price_cents":4611686018427387904,"quantity":4}],"payment_plan":{"mode":"paid_full"}}`,
		`{"items":[{"type":"catalog","product_id":"prd_x"}],"payment_plan":{"mode":"unpaid"}}`,
		`{"items":[],"discount_cents":-5,"payment_plan":{}}`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in sales.SaleCreate
		if json.Unmarshal(body, &in) != nil {
			return
		}
		err := in.Validate()
		if err == nil {
			err = sales.DryRun(&in)
		}
		if err != nil {
			testkit.Refused(t, fmt.Sprintf("body %q", body), err)
		}
	})
}
