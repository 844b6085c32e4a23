package sales

import (
	"errors"
	"testing"

	"oficina/http/wire"
	"oficina/schema/apierr"
)

// saleBodies are the sale request bodies besides creation, each with the
// checks it gets before the database.
var saleBodies = []struct {
	name  string
	check func(body []byte) error
}{
	{"POST /sales/{id}/payments", func(b []byte) error {
		var in PaymentCreate
		if err := wire.DecodeBytes(b, &in); err != nil {
			return err
		}
		return in.validate()
	}},
	{"POST /sales/{id}/cancel and payment cancel", func(b []byte) error {
		var in Cancellation
		return wire.DecodeBytes(b, &in)
	}},
	{"PATCH /sales/{id}/installments", func(b []byte) error {
		var in InstallmentsReschedule
		return wire.DecodeBytes(b, &in)
	}},
	{"POST /sales/{id}/versions", func(b []byte) error {
		var in SaleVersionCreate
		if err := wire.DecodeBytes(b, &in); err != nil {
			return err
		}
		return in.validate()
	}},
	{"PATCH /sales/{id}", func(b []byte) error {
		var in SaleUpdate
		return wire.DecodeBytes(b, &in)
	}},
	{"POST /quotes/{id}/convert_to_sale", func(b []byte) error {
		var in QuoteConversion
		return wire.DecodeBytes(b, &in)
	}},
}

// FuzzSaleRequestBodies: any body of any of these routes (which picks it)
// is decoded and checked without panicking, and every refusal is a
// catalogue error below 500 naming its fields (part 7).
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
		err := b.check(body)
		if err == nil {
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status() >= 500 {
			t.Fatalf("%s %q: %v is not a catalogue error", b.name, body, err)
		}
		if e.Code == apierr.ValidationFailed && len(e.Fields) == 0 {
			t.Fatalf("%s %q: validation_failed without errors[]", b.name, body)
		}
	})
}
