package sales

import (
	"errors"

	"oficina/schema/apitime"
	"oficina/streams"
)

// What the fuzz targets (package sales_test, beside the test kit) check
// besides the exported rules.
var (
	DryRun          = dryRun
	ValidatePayment = (*PaymentCreate).validate
	ValidateVersion = (*SaleVersionCreate).validate
)

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
