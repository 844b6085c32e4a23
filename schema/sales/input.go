package sales

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/field"
)

// Limits of sale requests (docs/api.md, "Sales").
const (
	MaxItems        = 200
	MaxInstallments = 120
	MaxQuantity     = 100_000
	MaxPriceCents   = 100_000_000_000   // unit price: one billion in major units
	MaxAmountCents  = 1_000_000_000_000 // discount, shipping, costs, plan amounts
	MaxName         = 200
	MaxText         = 10000
)

// SaleCreate is the body of POST /sales. Totals are never sent: they are
// computed from the items, discount, shipping and additional costs.
type SaleCreate struct {
	ClientID              *string           `json:"client_id"`
	SellerID              *string           `json:"seller_id"`
	Items                 []SaleItemInput   `json:"items" api:"required" minItems:"1" maxItems:"200"`
	PaymentPlan           *PaymentPlanInput `json:"payment_plan" api:"required"`
	DiscountCents         int64             `json:"discount_cents" min:"0" max:"1000000000000"`
	ShippingCents         int64             `json:"shipping_cents" min:"0" max:"1000000000000"`
	AdditionalCostsCents  int64             `json:"additional_costs_cents" min:"0" max:"1000000000000"`
	SaleDate              *apitime.Date     `json:"sale_date"`
	EstimatedDeliveryDate *apitime.Time     `json:"estimated_delivery_date"`
	Notes                 string            `json:"notes" maxLength:"10000"`
	ProductionStatus      *ProductionStatus `json:"production_status"`
	ProductionNotes       string            `json:"production_notes" maxLength:"10000"`
	// Request-only switches (2.6).
	TrackInFinance *bool `json:"track_in_finance"`
	DecrementStock *bool `json:"decrement_stock"`
}

// SaleItemInput is a sale item in a request: custom (name and unit price sent)
// or catalog (product_id, and variation_id when the product has
// variations; name and price come from the product).
type SaleItemInput struct {
	Type           SaleItemType `json:"type" api:"required"`
	Name           *string      `json:"name" minLength:"1" maxLength:"200" pattern:"nonblank"`
	UnitPriceCents *int64       `json:"unit_price_cents" min:"0" max:"100000000000"`
	ProductID      *string      `json:"product_id"`
	VariationID    *string      `json:"variation_id"`
	Quantity       *int64       `json:"quantity" min:"1" max:"100000"` // default 1
}

// Rules: a custom item sends its name and unit price and no product; a
// catalog item sends its product (and variation) and takes name and price
// from it (SaleItemInput.validate).
func (SaleItemInput) Rules() []field.Rule {
	return []field.Rule{
		{If: "type", In: []string{string(ItemCustom)}, Require: []string{"name", "unit_price_cents"},
			Forbid: []string{"product_id", "variation_id"}},
		{If: "type", In: []string{string(ItemCatalog)}, Require: []string{"product_id"}, Forbid: []string{"name", "unit_price_cents"}},
	}
}

// PaymentPlanInput is the payment plan in a request.
type PaymentPlanInput struct {
	Mode             PaymentPlanMode               `json:"mode" api:"required"`
	PaymentMethod    *PaymentMethod                `json:"payment_method"`
	AccountID        *string                       `json:"account_id"`
	PaidAt           *apitime.Date                 `json:"paid_at"`
	EntryAmountCents *int64                        `json:"entry_amount_cents" min:"1" max:"1000000000000"`
	Installments     []PaymentPlanInstallmentInput `json:"installments" minItems:"1" maxItems:"120"`
}

// Rules: paid_full takes neither a down payment nor installments;
// entry_and_rest needs both; installments and unpaid need installments and
// take neither a down payment nor paid_at, since nothing is paid upfront
// (PaymentPlanInput.validate).
func (PaymentPlanInput) Rules() []field.Rule {
	return []field.Rule{
		{If: "mode", In: []string{string(ModePaidFull)}, Forbid: []string{"entry_amount_cents", "installments"}},
		{If: "mode", In: []string{string(ModeEntryAndRest)}, Require: []string{"entry_amount_cents", "installments"}},
		{If: "mode", In: []string{string(ModeInstallments), string(ModeUnpaid)}, Require: []string{"installments"},
			Forbid: []string{"entry_amount_cents", "paid_at"}},
	}
}

// Rules: an unpaid sale needs its client (spec 4.4).
func (SaleCreate) Rules() []field.Rule {
	return []field.Rule{{If: "payment_plan.mode", In: []string{string(ModeUnpaid)}, Require: []string{"client_id"}}}
}

// PaymentPlanInstallmentInput is an installment of a plan or a schedule.
type PaymentPlanInstallmentInput struct {
	AmountCents *int64        `json:"amount_cents" api:"required" min:"1" max:"1000000000000"`
	DueDate     *apitime.Date `json:"due_date" api:"required"`
}

// Validate checks the request's shape (everything that needs neither the
// database nor the computed total) and reports every invalid field.
func (in *SaleCreate) Validate() error { return in.validate(true) }

// validate is Validate; quote conversion takes items from the quote.
func (in *SaleCreate) validate(withItems bool) error {
	var f apierr.Fields
	if withItems {
		validateItems(&f, "items", in.Items, true)
	}
	checkAmount(&f, "discount_cents", in.DiscountCents)
	checkAmount(&f, "shipping_cents", in.ShippingCents)
	checkAmount(&f, "additional_costs_cents", in.AdditionalCostsCents)
	checkText(&f, "notes", in.Notes, MaxText)
	checkText(&f, "production_notes", in.ProductionNotes, MaxText)
	if in.ProductionStatus != nil && !slices.Contains(ProductionStatuses, *in.ProductionStatus) {
		f.Add("production_status", apierr.InvalidValue)
	}
	if in.PaymentPlan == nil {
		f.Add("payment_plan", apierr.Required)
	} else {
		in.PaymentPlan.validate(&f, in.ClientID != nil)
	}
	return f.Err()
}

func validateItems(f *apierr.Fields, param string, items []SaleItemInput, required bool) {
	if len(items) == 0 && required {
		f.Add(param, apierr.Required)
		return
	}
	if len(items) > MaxItems {
		f.Add(param, apierr.OutOfRange)
		return
	}
	for i := range items {
		items[i].validate(f, param+"["+strconv.Itoa(i)+"]")
	}
}

func (it *SaleItemInput) validate(f *apierr.Fields, param string) {
	if it.Quantity != nil && (*it.Quantity < 1 || *it.Quantity > MaxQuantity) {
		f.Add(param+".quantity", apierr.OutOfRange)
	}
	switch it.Type {
	case ItemCustom:
		if it.Name == nil || strings.TrimSpace(*it.Name) == "" {
			f.Add(param+".name", apierr.Required)
		} else if utf8.RuneCountInString(strings.TrimSpace(*it.Name)) > MaxName {
			f.Add(param+".name", apierr.TooLong)
		}
		if it.UnitPriceCents == nil {
			f.Add(param+".unit_price_cents", apierr.Required)
		} else if *it.UnitPriceCents < 0 || *it.UnitPriceCents > MaxPriceCents {
			f.Add(param+".unit_price_cents", apierr.OutOfRange)
		}
		if it.ProductID != nil {
			f.Add(param+".product_id", apierr.NotAllowed)
		}
		if it.VariationID != nil {
			f.Add(param+".variation_id", apierr.NotAllowed)
		}
	case ItemCatalog:
		if it.ProductID == nil {
			f.Add(param+".product_id", apierr.Required)
		}
		// Name and price come from the product (2.6).
		if it.Name != nil {
			f.Add(param+".name", apierr.NotAllowed)
		}
		if it.UnitPriceCents != nil {
			f.Add(param+".unit_price_cents", apierr.NotAllowed)
		}
	case "":
		f.Add(param+".type", apierr.Required)
	default:
		f.Add(param+".type", apierr.InvalidValue)
	}
}

func (p *PaymentPlanInput) validate(f *apierr.Fields, hasClient bool) {
	const param = "payment_plan"
	if p.PaymentMethod != nil && !slices.Contains(PaymentMethods, *p.PaymentMethod) {
		f.Add(param+".payment_method", apierr.InvalidValue)
	}
	switch p.Mode {
	case ModePaidFull:
		if p.EntryAmountCents != nil {
			f.Add(param+".entry_amount_cents", apierr.NotAllowed)
		}
		if p.Installments != nil {
			f.Add(param+".installments", apierr.NotAllowed)
		}
		return
	case ModeEntryAndRest:
		if p.EntryAmountCents == nil {
			f.Add(param+".entry_amount_cents", apierr.Required)
		} else if *p.EntryAmountCents < 1 || *p.EntryAmountCents > MaxAmountCents {
			f.Add(param+".entry_amount_cents", apierr.OutOfRange)
		}
	case ModeInstallments, ModeUnpaid:
		if p.EntryAmountCents != nil {
			f.Add(param+".entry_amount_cents", apierr.NotAllowed)
		}
		if p.PaidAt != nil {
			f.Add(param+".paid_at", apierr.NotAllowed) // nothing is paid upfront
		}
		if p.Mode == ModeUnpaid && !hasClient {
			f.Add("client_id", apierr.Required)
		}
	case "":
		f.Add(param+".mode", apierr.Required)
		return
	default:
		f.Add(param+".mode", apierr.InvalidValue)
		return
	}
	validateSchedule(f, param+".installments", p.Installments)
}

// validateSchedule checks a list of installments (plan or reschedule).
func validateSchedule(f *apierr.Fields, param string, list []PaymentPlanInstallmentInput) {
	if len(list) == 0 {
		f.Add(param, apierr.Required)
		return
	}
	if len(list) > MaxInstallments {
		f.Add(param, apierr.OutOfRange)
		return
	}
	for i, n := range list {
		checkInstallment(f, param+"["+strconv.Itoa(i)+"]", n.AmountCents, n.DueDate != nil)
	}
}

// checkInstallment checks one installment of a schedule or a reschedule at
// param: an amount of 1 to MaxAmountCents, and a due date.
func checkInstallment(f *apierr.Fields, param string, amount *int64, dated bool) {
	if amount == nil {
		f.Add(param+".amount_cents", apierr.Required)
	} else if *amount < 1 || *amount > MaxAmountCents {
		f.Add(param+".amount_cents", apierr.OutOfRange)
	}
	if !dated {
		f.Add(param+".due_date", apierr.Required)
	}
}

func checkAmount(f *apierr.Fields, param string, v int64) {
	if v < 0 || v > MaxAmountCents {
		f.Add(param, apierr.OutOfRange)
	}
}

func checkText(f *apierr.Fields, param, v string, max int) {
	if utf8.RuneCountInString(v) > max {
		f.Add(param, apierr.TooLong)
	}
}

// checkReason checks the reason of versions, reversals and cancellation.
func checkReason(f *apierr.Fields, reason string) {
	switch r := strings.TrimSpace(reason); {
	case r == "":
		f.Add("reason", apierr.Required)
	case utf8.RuneCountInString(r) > MaxText:
		f.Add("reason", apierr.TooLong)
	}
}
