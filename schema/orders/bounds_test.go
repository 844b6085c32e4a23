package orders_test

import (
	"reflect"
	"strconv"
	"testing"

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
