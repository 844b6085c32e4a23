package sales

import (
	"errors"
	"testing"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/streams"
)

// FuzzCreateSaleRequest feeds arbitrary bodies through the request decoder
// and the creation rules that need no database (validation, custom item
// totals, the payment plan and its installments): nothing panics, and every
// refusal is an error of the catalogue, never an internal one.
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
		var in SaleCreate
		err := wire.DecodeBytes(body, &in)
		if err == nil {
			err = in.Validate()
		}
		if err == nil {
			err = dryRun(&in)
		}
		if err == nil {
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status() >= 500 {
			t.Fatalf("body %q: %v is not a catalogue error", body, err)
		}
		if e.Code == apierr.ValidationFailed && len(e.Fields) == 0 {
			t.Fatalf("body %q: validation_failed without errors[]", body)
		}
	})
}

// dryRun runs the creation rules that need no database on a request whose
// items are all custom: totals, the plan, its installments and upfront
// payment, and the invariants they must keep.
func dryRun(in *SaleCreate) error {
	s := &Row{ID: "sale_fuzz", CompanyID: "co_fuzz", DiscountCents: in.DiscountCents, ShippingCents: in.ShippingCents,
		AdditionalCostsCents: in.AdditionalCostsCents, SaleDate: apitime.Date{}}
	for i, it := range in.Items {
		if it.Type != ItemCustom {
			return nil
		}
		q := int64(1)
		if it.Quantity != nil {
			q = *it.Quantity
		}
		s.Items = append(s.Items, ItemRow{Position: i, Type: ItemCustom, Quantity: q, UnitPriceCents: *it.UnitPriceCents,
			TotalPriceCents: q * *it.UnitPriceCents})
	}
	if err := totals(s); err != nil {
		return err
	}
	plan, drafts, err := planFor(in.PaymentPlan, s.TotalCents, s.SaleDate)
	if err != nil {
		return err
	}
	s.PaymentPlan = plan
	e := Env{Write: &streams.Write{}}
	s.Installments = newInstallments(s, drafts, e)
	if err := payUpfront(s, e); err != nil {
		return err
	}
	settle(s, e.Today())
	var sum, paid int64
	for _, n := range s.Installments {
		sum += n.AmountCents
		paid += n.PaidCents
		if n.AmountCents < 1 {
			return errors.New("installment below one cent")
		}
	}
	if sum != s.TotalCents || paid != s.PaidCents || s.PaidCents > s.TotalCents {
		return errors.New("installments do not add up")
	}
	return nil
}
