package wire_test

import (
	"errors"
	"testing"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/orders"
)

// orderBodies are the order request bodies besides creation, each with the
// checks it gets before the database: PATCH (its own UnmarshalJSON, which
// tells null from omitted), status, complete and from_quote.
var orderBodies = []struct {
	name  string
	check func(body []byte) error
}{
	{"PATCH /service_orders/{id}", func(b []byte) error {
		var in orders.ServiceOrderUpdate
		return wire.DecodeBytes(b, &in)
	}},
	{"POST /service_orders/{id}/status", func(b []byte) error {
		var in orders.ServiceOrderStatusChange
		return wire.DecodeBytes(b, &in)
	}},
	{"POST /service_orders/{id}/complete", func(b []byte) error {
		var in orders.ServiceOrderComplete
		return wire.DecodeBytes(b, &in)
	}},
	{"POST /service_orders/from_quote", func(b []byte) error {
		var in orders.ServiceOrderFromQuote
		if err := wire.DecodeBytes(b, &in); err != nil {
			return err
		}
		return in.Validate()
	}},
}

// FuzzOrderRequestBodies: any body of any of these routes (which picks
// it) is decoded and checked without panicking, and every refusal is a
// catalogue error below 500 naming its fields (part 7).
func FuzzOrderRequestBodies(f *testing.F) {
	for i, s := range []string{
		`{"client_name":"Ana","items":[{"description":"x","quantity":1,"unit_price_cents":1,"total_cents":1}],"status":"scheduled"}`,
		`{"client_id":null,"technician_id":null,"scheduled_start":"2026-11-22T10:00:00Z"}`,
		`{"status":"completed"}`, `{"status":null}`, `{"link_financial_transaction":true}`,
		`{"quote_id":"quo_00000000000000000000000000","priority":"urgent","support_technician_ids":["mem_1","mem_1"]}`,
		`{"CLIENT_NAME":"x"}`, `{"client_name":"a","client_name":"b"}`, `{"internal_notes":"a\u0000b"}`,
		`{"items":[{"quantity":1e400}]}`, `{"status":1}`, `[]`, `{`, ``, `{"":1}`,
	} {
		f.Add(byte(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		b := orderBodies[int(which)%len(orderBodies)]
		err := b.check(body)
		if err == nil {
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s %q: not a catalogue error: %v", b.name, body, err)
		}
		if entry, ok := apierr.Default.Lookup(e.Code); !ok || entry.Status >= 500 {
			t.Fatalf("%s %q: code %q", b.name, body, e.Code)
		}
		if e.Code == apierr.ValidationFailed && len(e.Fields) == 0 {
			t.Fatalf("%s %q: 422 without errors", b.name, body)
		}
	})
}
