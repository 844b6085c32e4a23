package orders_test

import (
	"reflect"
	"strconv"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/orders"
)

// Issue 26 item 6: the bounds the OpenAPI document gives the money members
// of order requests (min/max tags) are the validators' own (0 to MaxCents).
func TestDocumentedMoneyBoundsAreTheValidators(t *testing.T) {
	max := strconv.FormatInt(orders.MaxCents, 10)
	seen := 0
	for _, typ := range []reflect.Type{reflect.TypeFor[orders.ServiceOrderCreate](), reflect.TypeFor[orders.ServiceOrderUpdate](),
		reflect.TypeFor[orders.ServiceOrderItemInput]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch f.Tag.Get("json") {
			case "unit_price_cents", "total_cents", "discount_cents", "additional_costs_cents":
				seen++
				if f.Tag.Get("min") != "0" || f.Tag.Get("max") != max {
					t.Errorf("%s.%s: min %q max %q, want 0 and %s", typ.Name(), f.Name, f.Tag.Get("min"), f.Tag.Get("max"), max)
				}
			}
		}
	}
	if seen != 6 {
		t.Errorf("%d money members checked, want 6", seen)
	}
}

// Issue 26 item 6: the lengths, counts and patterns the OpenAPI document
// gives order requests are the validators' (text, ref, supportIDs, items).
func TestDocumentedTextRulesAreTheValidators(t *testing.T) {
	t.Parallel()
	n := func(v int) string { return strconv.Itoa(v) }
	id := map[string]string{"minLength": "1", "maxLength": n(orders.MaxIDLen)}
	testkit.Tags(t, map[string]map[string]string{
		"client_name":            {"minLength": "1", "maxLength": n(orders.MaxNameLen), "pattern": "nonblank"},
		"client_phone":           {"maxLength": n(orders.MaxPhoneLen)},
		"client_description":     {"maxLength": n(orders.MaxTextLen)},
		"internal_notes":         {"maxLength": n(orders.MaxTextLen)},
		"service_address":        {"maxLength": n(orders.MaxAddressLen)},
		"client_id":              id,
		"type_id":                id,
		"technician_id":          id,
		"support_technician_ids": {"minLength": "1", "maxLength": n(orders.MaxIDLen), "maxItems": n(orders.MaxSupport), "uniqueItems": "true"},
		"items":                  {"maxItems": n(orders.MaxItems)},
		"description":            {"minLength": "1", "maxLength": n(orders.MaxItemDescLen), "pattern": "nonblank"},
		"quantity":               {"exclusiveMin": "0", "max": n(orders.MaxQuantity)},
		"quote_id":               {"minLength": "1"},
	}, reflect.TypeFor[orders.ServiceOrderCreate](), reflect.TypeFor[orders.ServiceOrderUpdate](),
		reflect.TypeFor[orders.ServiceOrderFromQuote](), reflect.TypeFor[orders.ServiceOrderItemInput]())
}
