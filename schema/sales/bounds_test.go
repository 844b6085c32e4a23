package sales_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/apierr"
	"oficina/schema/field"
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
		reflect.TypeFor[sales.PaymentCreate](), reflect.TypeFor[sales.SaleVersionCreate](), reflect.TypeFor[sales.QuoteConversion](),
		reflect.TypeFor[sales.InstallmentsRescheduleEntry]()} {
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
	if seen != 12 {
		t.Errorf("%d money members checked, want 12", seen)
	}
}

// Issue 26 item 6: the lengths and counts the OpenAPI document gives sale
// requests are the validators' (checkText, checkReason, validateItems,
// validateSchedule, replan, the item's name and quantity).
func TestDocumentedTextRulesAreTheValidators(t *testing.T) {
	t.Parallel()
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	text := map[string]string{"maxLength": n(sales.MaxText)}
	testkit.Tags(t, map[string]map[string]string{
		"notes":            text,
		"production_notes": text,
		"reason":           {"minLength": "1", "maxLength": n(sales.MaxText), "pattern": "nonblank"},
		"name":             {"minLength": "1", "maxLength": n(sales.MaxName), "pattern": "nonblank"},
		"quantity":         {"min": "1", "max": n(sales.MaxQuantity)},
	}, reflect.TypeFor[sales.SaleCreate](), reflect.TypeFor[sales.SaleItemInput](), reflect.TypeFor[sales.QuoteConversion](),
		reflect.TypeFor[sales.SaleUpdate](), reflect.TypeFor[sales.Cancellation](), reflect.TypeFor[sales.SaleVersionCreate]())
	testkit.Tags(t, map[string]map[string]string{"items": {"minItems": "1", "maxItems": n(sales.MaxItems)}},
		reflect.TypeFor[sales.SaleCreate](), reflect.TypeFor[sales.SaleVersionCreate]())
	testkit.Tags(t, map[string]map[string]string{"installments": {"minItems": "1", "maxItems": n(sales.MaxInstallments)}},
		reflect.TypeFor[sales.PaymentPlanInput](), reflect.TypeFor[sales.InstallmentsReschedule]())
	// A version's installments may be [] when nothing is left to pay.
	testkit.Tags(t, map[string]map[string]string{"installments": {"minItems": "", "maxItems": n(sales.MaxInstallments)}},
		reflect.TypeFor[sales.SaleVersionCreate]())
}

// Issue 26 item 6: the rules between members the OpenAPI document gives
// sale items, plans and sales (Rules, as if/then) are the validator's: for
// each rule, a request that holds it passes Validate, and one without a
// member it requires, or with one it forbids, is refused on that member.
func TestDocumentedRulesAreTheValidators(t *testing.T) {
	t.Parallel()
	values := map[string]any{"name": "Cabo", "unit_price_cents": 100, "product_id": "prd_x", "variation_id": "pvar_x",
		"entry_amount_cents": 1, "paid_at": "2026-01-01", "installments": []any{map[string]any{"amount_cents": 1, "due_date": "2026-02-01"}},
		"client_id": "cli_x"}
	validate := func(body map[string]any) []apierr.FieldError {
		b, _ := json.Marshal(body)
		var in sales.SaleCreate
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		if err := in.Validate(); err != nil {
			return apierr.As(err).Fields
		}
		return nil
	}
	// sale is a body whose item and plan hold r (at item or plan).
	sale := func(at string, r field.Rule) map[string]any {
		item, plan := map[string]any{"type": "custom", "name": "Cabo", "unit_price_cents": 100}, map[string]any{"mode": "paid_full"}
		body := map[string]any{"items": []any{item}, "payment_plan": plan, "client_id": "cli_x"}
		target := map[string]map[string]any{"item": item, "plan": plan, "sale": body}[at]
		if len(r.In) > 0 {
			target[strings.TrimPrefix(r.If, "payment_plan.")] = r.In[0]
			if at == "sale" {
				plan[strings.TrimPrefix(r.If, "payment_plan.")] = r.In[0]
			}
		}
		if at == "item" && r.In[0] == sales.ItemCatalog {
			delete(item, "name")
			delete(item, "unit_price_cents")
		}
		for _, m := range r.Require {
			target[m] = values[m]
		}
		if at != "plan" && plan["mode"] != "paid_full" {
			plan["installments"] = values["installments"]
		}
		if plan["mode"] == "entry_and_rest" {
			plan["entry_amount_cents"] = values["entry_amount_cents"]
		}
		return body
	}
	prefix := map[string]string{"item": "items[0].", "plan": "payment_plan.", "sale": ""}
	for at, rules := range map[string][]field.Rule{"item": sales.SaleItemInput{}.Rules(), "plan": sales.PaymentPlanInput{}.Rules(),
		"sale": sales.SaleCreate{}.Rules()} {
		for _, r := range rules {
			for _, in := range r.In {
				r := r
				r.In = []string{in}
				if errs := validate(sale(at, r)); errs != nil {
					t.Errorf("%s %s=%s: a request that holds the rule is refused: %v", at, r.If, in, errs)
				}
				for _, m := range r.Require {
					body := sale(at, r)
					target := map[string]any{"item": body["items"].([]any)[0], "plan": body["payment_plan"], "sale": body}[at].(map[string]any)
					delete(target, m)
					if !slices.Contains(validate(body), apierr.FieldError{Param: prefix[at] + m, Code: apierr.Required}) {
						t.Errorf("%s %s=%s without %s: %v, want %s%s required", at, r.If, in, m, validate(body), prefix[at], m)
					}
				}
				for _, m := range r.Forbid {
					body := sale(at, r)
					target := map[string]any{"item": body["items"].([]any)[0], "plan": body["payment_plan"], "sale": body}[at].(map[string]any)
					target[m] = values[m]
					if !slices.Contains(validate(body), apierr.FieldError{Param: prefix[at] + m, Code: apierr.NotAllowed}) {
						t.Errorf("%s %s=%s with %s: %v, want %s%s not_allowed", at, r.If, in, m, validate(body), prefix[at], m)
					}
				}
			}
		}
	}
}
