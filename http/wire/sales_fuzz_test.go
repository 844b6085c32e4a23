package wire_test

import (
	"fmt"
	"testing"

	"oficina/http/wire"
	"oficina/ops/testkit"
	"oficina/schema/sales"
)

// FuzzCreateSaleRequest feeds arbitrary bodies of POST /sales through the
// request decoder and the creation validation: nothing panics, and every
// refusal is an error of the catalogue, never an internal one. The
// creation rules past validation are fuzzed in schema/sales.
func FuzzCreateSaleRequest(f *testing.F) {
	for _, seed := range []string{
		`{"items":[{"type":"custom","name":"a","unit_price_cents":100}],"payment_plan":{"mode":"paid_full"}}`,
		`{"items":[{"type":"custom","name":"a","unit_price_cents":1000,"quantity":3}],"discount_cents":1,"shipping_cents":2,
		  "payment_plan":{"mode":"entry_and_rest","entry_amount_cents":1000,"installments":[{"amount_cents":1000,"due_date":"2026-01-01"},{"amount_cents":1000,"due_date":"2026-02-01"}]}}`,
		`{"client_id":"cli_x","items":[{"type":"catalog","product_id":"prd_x","variation_id":"pvar_x"}],
		  "payment_plan":{"mode":"unpaid","installments":[{"amount_cents":1,"due_date":"2026-01-01"}]}}`,
		`{"items":[{"type":"custom","name":"a","unit_price_cents":9223372036854775807,"quantity":100000}],"payment_plan":{"mode":"installments","installments":[]}}`,
		`{"total_cents":1}`, `[]`, `{"items":null}`, `{"payment_plan":{"installments":[{"due_date":"2026-13-01"}]}}`,
		`{"sale_date":"2026-02-30","estimated_delivery_date":"2026-01-01T00:00:00+03:00"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in sales.SaleCreate
		err := wire.DecodeBytes(body, &in)
		if err == nil {
			err = in.Validate()
		}
		if err != nil {
			testkit.Refused(t, fmt.Sprintf("body %q", body), err)
		}
	})
}

// saleBodies are the sale request bodies besides creation, as the decoder
// reads them (the checks each gets after decoding are fuzzed in
// schema/sales).
var saleBodies = []struct {
	name string
	in   func() any
}{
	{"POST /sales/{id}/payments", func() any { return &sales.PaymentCreate{} }},
	{"POST /sales/{id}/cancel and payment cancel", func() any { return &sales.Cancellation{} }},
	{"PATCH /sales/{id}/installments", func() any { return &sales.InstallmentsReschedule{} }},
	{"POST /sales/{id}/versions", func() any { return &sales.SaleVersionCreate{} }},
	{"PATCH /sales/{id}", func() any { return &sales.SaleUpdate{} }},
	{"POST /quotes/{id}/convert_to_sale", func() any { return &sales.QuoteConversion{} }},
}

// FuzzSaleRequestBodies: any body of any of these routes (which picks it)
// is decoded without panicking, and every refusal is a catalogue error
// below 500 naming its fields (part 7).
func FuzzSaleRequestBodies(f *testing.F) {
	for i, s := range []string{
		`{"amount_cents":100,"paid_at":"2026-01-02","payment_method":"pix","installment_id":"ins_x","account_id":"acc_x"}`,
		`{"reason":"cliente desistiu"}`,
		`{"installments":[{"id":"ins_x","amount_cents":500,"due_date":"2099-01-01"},{"amount_cents":500,"due_date":"2099-02-01"}]}`,
		`{"reason":"x","seller_id":null,"client_id":"cli_x","items":[{"type":"custom","name":"a","unit_price_cents":1}],"discount_cents":-1}`,
		`{"notes":null,"production_status":"pronto","estimated_delivery_date":"2026-01-01T00:00:00Z"}`,
		`{"payment_plan":{"mode":"paid_full"},"shipping_cents":9223372036854775807,"sale_date":"2026-02-30"}`,
		`{"NOTES":"x"}`, `{"reason":"a","reason":"b"}`, `{"reason":"a\u0000b"}`, `{"amount_cents":1e400}`,
		`{"installments":"x"}`, `[]`, `{`, ``,
	} {
		f.Add(byte(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		b := saleBodies[int(which)%len(saleBodies)]
		if err := wire.DecodeBytes(body, b.in()); err != nil {
			testkit.Refused(t, fmt.Sprintf("%s %q", b.name, body), err)
		}
	})
}
