package sales_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/sales"
)

// saleBodyRules are the checks the sale request bodies besides creation
// get after decoding and before the database (the other bodies get none;
// decoding them is fuzzed in http/wire).
var saleBodyRules = []struct {
	name  string
	check func(body []byte) error
}{
	{"POST /sales/{id}/payments", func(b []byte) error {
		var in sales.PaymentCreate
		if json.Unmarshal(b, &in) != nil {
			return nil
		}
		return sales.ValidatePayment(&in)
	}},
	{"POST /sales/{id}/versions", func(b []byte) error {
		var in sales.SaleVersionCreate
		if json.Unmarshal(b, &in) != nil {
			return nil
		}
		return sales.ValidateVersion(&in)
	}},
}

// FuzzSaleBodyRules: any payment or new version request (which picks it),
// built from arbitrary JSON by encoding/json (what it cannot build is
// skipped), is checked without panicking, and every refusal is a catalogue
// error below 500 naming its fields (part 7).
func FuzzSaleBodyRules(f *testing.F) {
	for i, s := range []string{
		`{"amount_cents":100,"paid_at":"2026-01-02","payment_method":"pix","installment_id":"ins_x","account_id":"acc_x"}`,
		`{"reason":"x","seller_id":null,"client_id":"cli_x","items":[{"type":"custom","name":"a","unit_price_cents":1}],"discount_cents":-1}`,
		`{"amount_cents":9223372036854775807,"paid_at":"2026-01-02"}`,
		`{"reason":"x","ITEMS":[]}`,
		`{"payment_plan":{"mode":"paid_full"},"shipping_cents":9223372036854775807,"sale_date":"2026-02-30"}`,
		`{"payment_plan":{"mode":"installments","installments":[{"amount_cents":-1,"due_date":"2099-01-01"}]}}`,
		`{"amount_cents":-1}`, `{"reason":""}`, `{"reason":"a\u0000b"}`, `{}`,
	} {
		f.Add(byte(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		b := saleBodyRules[int(which)%len(saleBodyRules)]
		if err := b.check(body); err != nil {
			testkit.Refused(t, fmt.Sprintf("%s %q", b.name, body), err)
		}
	})
}
