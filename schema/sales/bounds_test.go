package sales_test

import (
	"reflect"
	"strconv"
	"testing"

	"oficina/schema/sales"
)

// Issue 26 item 6: the bounds the OpenAPI document gives the money members
// of sale requests (min/max tags) are the validators' own constants.
func TestDocumentedMoneyBoundsAreTheValidators(t *testing.T) {
	want := map[string][2]int64{
		"unit_price_cents": {0, sales.MaxPriceCents}, "discount_cents": {0, sales.MaxAmountCents},
		"shipping_cents": {0, sales.MaxAmountCents}, "additional_costs_cents": {0, sales.MaxAmountCents},
		"entry_amount_cents": {1, sales.MaxAmountCents}, "amount_cents": {1, sales.MaxAmountCents},
	}
	seen := 0
	for _, typ := range []reflect.Type{reflect.TypeFor[sales.SaleCreate](), reflect.TypeFor[sales.SaleItemInput](),
		reflect.TypeFor[sales.PaymentPlanInput](), reflect.TypeFor[sales.PaymentPlanInstallmentInput](),
		reflect.TypeFor[sales.PaymentCreate](), reflect.TypeFor[sales.SaleVersionCreate]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			b, ok := want[f.Tag.Get("json")]
			if !ok {
				continue
			}
			seen++
			if f.Tag.Get("min") != strconv.FormatInt(b[0], 10) || f.Tag.Get("max") != strconv.FormatInt(b[1], 10) {
				t.Errorf("%s.%s: min %q max %q, want %d and %d", typ.Name(), f.Name, f.Tag.Get("min"), f.Tag.Get("max"), b[0], b[1])
			}
		}
	}
	if seen != 10 {
		t.Errorf("%d money members checked, want 10", seen)
	}
}
