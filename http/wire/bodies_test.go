package wire_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/leads"
	"oficina/schema/orders"
	"oficina/schema/sales"
	"oficina/schema/webhooks"
)

// typeErrorCases are JSON type errors inside the arrays of every request
// body that has them — sale items, plan installments, reschedules and
// versions, order items and support technicians, webhook events — and in
// the lead's task object, at each depth the bodies use. Each names the
// value as validation names a range error there: items[1].unit_price_cents.
var typeErrorCases = []struct {
	name  string
	into  func() any
	body  string
	param string
	fc    apierr.FieldCode
}{
	{"sale item, first", func() any { return new(sales.SaleCreate) },
		`{"items":[{"unit_price_cents":"x"}]}`, "items[0].unit_price_cents", "invalid_type"},
	{"sale item, second", func() any { return new(sales.SaleCreate) },
		`{"items":[{"type":"custom","name":"a","unit_price_cents":1},{"type":"custom","quantity":"2"}]}`, "items[1].quantity", "invalid_type"},
	{"sale item, huge", func() any { return new(sales.SaleCreate) },
		`{"items":[{},{},{"unit_price_cents":1e40}]}`, "items[2].unit_price_cents", "out_of_range"},
	{"sale item not an object", func() any { return new(sales.SaleCreate) },
		`{"items":[{}, 7]}`, "items[1]", "invalid_type"},
	{"plan installment amount", func() any { return new(sales.SaleCreate) },
		`{"payment_plan":{"mode":"installments","installments":[{"amount_cents":1,"due_date":"2026-01-01"},{"amount_cents":"1"}]}}`,
		"payment_plan.installments[1].amount_cents", "invalid_type"},
	{"plan installment date", func() any { return new(sales.SaleCreate) },
		`{"payment_plan":{"installments":[{"due_date":"2026-01-01"},{"due_date":"01/02/2026"}]}}`,
		"payment_plan.installments[1].due_date", "invalid_date"},
	{"reschedule", func() any { return new(sales.InstallmentsReschedule) },
		`{"installments":[{"amount_cents":1,"due_date":"2026-01-01"},{"amount_cents":1,"due_date":"2026-02-01"},{"amount_cents":true}]}`,
		"installments[2].amount_cents", "invalid_type"},
	{"version item", func() any { return new(sales.SaleVersionCreate) },
		`{"reason":"x","items":[{"type":"custom"},{"unit_price_cents":[1]}]}`, "items[1].unit_price_cents", "invalid_type"},
	{"version installment", func() any { return new(sales.SaleVersionCreate) },
		`{"reason":"x","installments":[{"due_date":2026}]}`, "installments[0].due_date", "invalid_date"},
	{"conversion plan", func() any { return new(sales.QuoteConversion) },
		`{"payment_plan":{"installments":[{"amount_cents":{}}]}}`, "payment_plan.installments[0].amount_cents", "invalid_type"},
	{"order item", func() any { return new(orders.ServiceOrderCreate) },
		`{"client_name":"a","items":[{"description":"a","quantity":1,"unit_price_cents":1,"total_cents":1},{"quantity":"1"}]}`,
		"items[1].quantity", "invalid_type"},
	{"order item, huge", func() any { return new(orders.ServiceOrderCreate) },
		`{"items":[{"total_cents":99999999999999999999}]}`, "items[0].total_cents", "out_of_range"},
	{"support technician", func() any { return new(orders.ServiceOrderCreate) },
		`{"support_technician_ids":["mem_1",5]}`, "support_technician_ids[1]", "invalid_type"},
	{"order edit item", func() any { return new(orders.ServiceOrderUpdate) },
		`{"items":[{"description":"a"},{"unit_price_cents":"9"}]}`, "items[1].unit_price_cents", "invalid_type"},
	{"lead task", func() any { return new(leads.LeadCaptureCreate) },
		`{"name":"a","task":{"due_in_hours":"24"}}`, "task.due_in_hours", "invalid_type"},
	{"lead task timestamp", func() any { return new(leads.LeadCaptureCreate) },
		`{"name":"a","task":{"due_at":"amanhã"}}`, "task.due_at", "invalid_timestamp"},
	{"webhook event", func() any { return new(webhooks.WebhookEndpointCreate) },
		`{"url":"https://x.example.com","events":["sale.paid",5]}`, "events[1]", "invalid_type"},
}

// Spec 7 (the client reads errors[].param): a JSON type error inside an
// array keeps the item's index, as a range error found by validation does
// — {"items":[{"unit_price_cents":"x"}]} is items[0].unit_price_cents
// invalid_type, not items.unit_price_cents.
func TestTypeErrorsKeepTheItemIndexLikeRangeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range typeErrorCases {
		if !pathIn(tc.body, tc.param) {
			t.Fatalf("%s: %s is no path of %s", tc.name, tc.param, tc.body)
		}
		err := wire.DecodeBytes([]byte(tc.body), tc.into())
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.ValidationFailed || len(e.Fields) != 1 ||
			e.Fields[0].Param != tc.param || e.Fields[0].Code != tc.fc {
			t.Errorf("%s: %s → %v, want %s %s", tc.name, tc.body, err, tc.param, tc.fc)
		}
	}
	// The same field with a value out of range, found by validation.
	var in sales.SaleCreate
	if err := wire.DecodeBytes([]byte(`{"items":[{"type":"custom","name":"a","unit_price_cents":-1}],"payment_plan":{"mode":"paid_full"}}`), &in); err != nil {
		t.Fatal(err)
	}
	var e *apierr.Error
	if err := in.Validate(); !errors.As(err, &e) || e.Fields[0].Param != "items[0].unit_price_cents" {
		t.Fatalf("range error: %v", err)
	}
}

// FuzzTypeErrorParams: whatever the body, every 422 of the request decoder
// names a param, for each body type with arrays.
func FuzzTypeErrorParams(f *testing.F) {
	for i, tc := range typeErrorCases {
		f.Add(uint(i), tc.body)
	}
	f.Fuzz(func(t *testing.T, i uint, body string) {
		tc := typeErrorCases[i%uint(len(typeErrorCases))]
		err := wire.DecodeBytes([]byte(body), tc.into())
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.ValidationFailed {
			return
		}
		for _, fe := range e.Fields {
			if fe.Param == "" {
				t.Fatalf("%s: empty param", body)
			}
			switch fe.Code {
			case "invalid_type", "out_of_range", "invalid_date", "invalid_timestamp":
				if !pathIn(body, fe.Param) {
					t.Fatalf("%s: %s %s is no path of the body", body, fe.Param, fe.Code)
				}
			}
		}
	})
}

// pathIn reports whether param (a.b[1].c) names a value of the JSON body.
func pathIn(body, param string) bool {
	var v any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber() // 1e700 is a value too
	if dec.Decode(&v) != nil {
		return false
	}
	for _, seg := range strings.Split(param, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[name]; !ok {
			return false
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			a, ok := v.([]any)
			if err != nil || !ok || n >= len(a) {
				return false
			}
			v, rest = a[n], strings.TrimPrefix(after, "[")
		}
	}
	return true
}

// An unknown member inside an array item is named by its path too
// (encoding/json names it alone: "hostile_unknown").
func TestUnknownMembersKeepTheItemIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		into        func() any
		body, param string
	}{
		{func() any { return new(sales.SaleCreate) }, `{"items":[{},{"colour":"red"}]}`, "items[1].colour"},
		{func() any { return new(sales.SaleCreate) }, `{"payment_plan":{"installments":[{"amount_cents":1,"hostile":1}]}}`,
			"payment_plan.installments[0].hostile"},
		{func() any { return new(orders.ServiceOrderCreate) }, `{"items":[{"description":"a"},{"__proto__":{}}]}`, "items[1].__proto__"},
		{func() any { return new(orders.ServiceOrderUpdate) }, `{"items":[{"constructor":1}]}`, "items[0].constructor"},
		{func() any { return new(sales.InstallmentsReschedule) }, `{"installments":[{"amount_cents":1,"AMOUNT_CENTS":2}]}`, "installments[0].AMOUNT_CENTS"},
		{func() any { return new(leads.LeadCaptureCreate) }, `{"name":"a","task":{"owner":"x"}}`, "task.owner"},
		{func() any { return new(sales.SaleCreate) }, `{"hostile":1}`, "hostile"},
	} {
		err := wire.DecodeBytes([]byte(tc.body), tc.into())
		var e *apierr.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Param != tc.param || e.Fields[0].Code != "unknown_field" {
			t.Errorf("%s: %v, want %s unknown_field", tc.body, err, tc.param)
		}
	}
}
