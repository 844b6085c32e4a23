package wire_test

import (
	"errors"
	"testing"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/orders"
)

// FuzzCreateServiceOrder: any body goes through the strict decoder and the
// create validation without panicking, and every refusal is a catalogue
// error below 500 whose field codes are in the catalogue (part 7: bad input
// never becomes a 500).
func FuzzCreateServiceOrder(f *testing.F) {
	for _, s := range []string{
		`{"client_name":"Ana"}`,
		`{"client_name":"Ana","items":[{"description":"Troca","quantity":1.5,"unit_price_cents":1000,"total_cents":1500}],"discount_cents":100,"additional_costs_cents":50}`,
		`{"client_name":"Ana","scheduled_start":"2026-11-22T10:00:00Z","scheduled_end":"2026-11-22T09:00:00Z"}`,
		`{"client_name":"  ","priority":"highest","support_technician_ids":["mem_1","mem_1"]}`,
		`{"client_name":"Ana","items":[{"quantity":0}],"discount_cents":-1}`,
		`{"client_name":"Ana","items":[{"description":"x","quantity":1e400,"unit_price_cents":1.5,"total_cents":9223372036854775808}]}`,
		`{"client_name":"Ana\u0000","client_phone":"\u0000"}`,
		`{"client_name":"Ana","scheduled_start":"2026-11-22 10:00"}`,
		`{"client_name":"Ana","client_name":"Bia"}`,
		`{"client_name":"Ana","unknown":1}`,
		`{"client_name":"Ana","items":[{"description":"x","quantity":1,"unit_price_cents":1,"total_cents":1,"sku":"x"}]}`,
		`{"client_name":"Ana","discount_cents":1000}`,
		`{"":""}`, `[1]`, `{`, `null`, ``, `{"client_name":null,"send_to_technician":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in orders.ServiceOrderCreate
		err := wire.DecodeBytes(body, &in)
		if err == nil {
			err = in.Validate()
		}
		if err == nil {
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) {
			t.Fatalf("%q: not a catalogue error: %v", body, err)
		}
		entry, ok := apierr.Default.Lookup(e.Code)
		if !ok || entry.Status >= 500 {
			t.Fatalf("%q: code %q (known %v)", body, e.Code, ok)
		}
		if e.Code == apierr.ValidationFailed && len(e.Fields) == 0 {
			t.Fatalf("%q: 422 without errors", body)
		}
		for _, fe := range e.Fields {
			if _, ok := apierr.Default.Field(fe.Code); !ok {
				t.Fatalf("%q: field error %+v not in the catalogue", body, fe)
			}
		}
	})
}
