package sales

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/ids"
	"oficina/schema/products"
	"oficina/schema/quotes"
	"oficina/streams"
)

// QuoteConversion is the body of POST /quotes/{id}/convert_to_sale. Client,
// items, discount and additional costs come from the quote; the payment
// plan too unless one is sent; the rest is what creation takes.
type QuoteConversion struct {
	PaymentPlan           *PaymentPlanInput `json:"payment_plan"`
	SellerID              *string           `json:"seller_id"`
	ShippingCents         int64             `json:"shipping_cents" min:"0" max:"1000000000000"`
	SaleDate              *apitime.Date     `json:"sale_date"`
	EstimatedDeliveryDate *apitime.Time     `json:"estimated_delivery_date"`
	Notes                 *string           `json:"notes" maxLength:"10000"` // default: the quote's notes
	ProductionStatus      *ProductionStatus `json:"production_status"`
	ProductionNotes       string            `json:"production_notes" maxLength:"10000"`
	TrackInFinance        *bool             `json:"track_in_finance"`
	DecrementStock        *bool             `json:"decrement_stock"`
}

// FinanceRequest says what a request decides about finance (4.4, 5.4):
// whether it sends track_in_finance (and its value) and whether it chooses
// an account.
type FinanceRequest struct {
	Decides, Track, ChoosesAccount bool
}

// Finance is what the conversion decides about finance.
func (in *QuoteConversion) Finance() FinanceRequest {
	return financeOf(in.TrackInFinance, in.PaymentPlan)
}

// Finance is what the creation decides about finance.
func (in *SaleCreate) Finance() FinanceRequest {
	return financeOf(in.TrackInFinance, in.PaymentPlan)
}

func financeOf(track *bool, plan *PaymentPlanInput) FinanceRequest {
	r := FinanceRequest{Decides: track != nil, ChoosesAccount: plan != nil && plan.AccountID != nil}
	r.Track = track != nil && *track
	return r
}

// ConvertQuote turns an approved quote into a sale through the whole
// creation path, once: a quote that is not approved, or that already became
// a sale, is 409.
func ConvertQuote(ctx context.Context, w *streams.Write, quoteID string, in QuoteConversion) (*Row, error) {
	q, err := quotes.Get(ctx, w.Tx, quoteID, true)
	if err != nil {
		return nil, err
	}
	if q.Status != quotes.StatusApproved || q.ConvertedSaleID != nil {
		return nil, apierr.New(apierr.Conflict)
	}
	plan := in.PaymentPlan
	if plan == nil {
		if plan, err = quotePlan(q.PaymentPlan); err != nil {
			return nil, err
		}
	}
	notes := q.Notes
	if in.Notes != nil {
		notes = *in.Notes
	}
	ci := SaleCreate{ClientID: q.ClientID, SellerID: in.SellerID, PaymentPlan: plan, DiscountCents: q.DiscountCents,
		ShippingCents: in.ShippingCents, AdditionalCostsCents: q.AdditionalCostsCents, SaleDate: in.SaleDate,
		EstimatedDeliveryDate: in.EstimatedDeliveryDate, Notes: notes, ProductionStatus: in.ProductionStatus,
		ProductionNotes: in.ProductionNotes, TrackInFinance: in.TrackInFinance, DecrementStock: in.DecrementStock}
	if err := ci.validate(false); err != nil {
		return nil, err
	}
	s, err := create(ctx, w, ci, CreateOptions{QuoteID: &q.ID, items: func(s *Row) ([]ItemRow, error) {
		return quoteItems(ctx, w.Tx, s, q.Items)
	}})
	if err != nil {
		return nil, err
	}
	_, err = w.Tx.NewUpdate().Model((*quotes.Row)(nil)).Set("converted_sale_id = ?", s.ID).Set("updated_at = ?", w.At).
		Where("id = ?", q.ID).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("sales: mark quote converted: %w", err)
	}
	return s, nil
}

// quotePlan reads the payment plan stored on a quote (entry_amount_cents
// and installments of amount_cents and due_date); its mode, when absent,
// follows from what it has, and a quote without a plan converts as
// paid_full (docs/api.md), as one with an empty plan does.
func quotePlan(raw json.RawMessage) (*PaymentPlanInput, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return &PaymentPlanInput{Mode: ModePaidFull}, nil
	}
	p := new(PaymentPlanInput)
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, apierr.Invalid("payment_plan", apierr.InvalidValue)
	}
	p.AccountID = nil // an account is chosen in the request, never by the quote
	if p.Mode == "" {
		switch {
		case p.EntryAmountCents != nil && *p.EntryAmountCents > 0:
			p.Mode = ModeEntryAndRest
		case len(p.Installments) > 0:
			p.Mode = ModeInstallments
		default:
			p.Mode = ModePaidFull
		}
	}
	return p, nil
}

// quoteItems turns quote lines into sale items at the quote's prices (what
// the client approved). A line with a product of the catalogue (and its
// variation, when the product has them) is a catalog item, so stock
// follows; other lines, and lines whose quantity is not a whole number, are
// custom items (the latter as one unit at the line's total).
func quoteItems(ctx context.Context, tx bun.IDB, s *Row, lines []quotes.QuoteItem) ([]ItemRow, error) {
	if len(lines) == 0 {
		return nil, apierr.Invalid("items", apierr.Required)
	}
	var pids, vids []string
	for _, l := range lines {
		if l.ProductID != nil && ids.Valid("prd", *l.ProductID) {
			pids = append(pids, *l.ProductID)
		}
		if l.VariationID != nil && ids.Valid("pvar", *l.VariationID) {
			vids = append(vids, *l.VariationID)
		}
	}
	ps, vs, err := products.Lookup(ctx, tx, pids, vids)
	if err != nil {
		return nil, err
	}
	out := make([]ItemRow, len(lines))
	for i, l := range lines {
		it := ItemRow{ID: ids.New("sli"), CompanyID: s.CompanyID, SaleID: s.ID, Version: 1, Position: i, Type: ItemCustom,
			Name: strings.TrimSpace(l.Description), Quantity: 1, UnitPriceCents: l.TotalCents}
		if whole := math.Trunc(l.Quantity); whole == l.Quantity && whole >= 1 && whole <= MaxQuantity {
			it.Quantity, it.UnitPriceCents = int64(whole), l.UnitPriceCents
			if p := ps[deref(l.ProductID)]; p != nil {
				v := vs[deref(l.VariationID)]
				switch {
				case v != nil && v.ProductID == p.ID:
					it.Type, it.ProductID, it.VariationID = ItemCatalog, &p.ID, &v.ID
				case l.VariationID == nil && !p.HasVariations:
					it.Type, it.ProductID = ItemCatalog, &p.ID
				}
			}
		}
		if it.Name == "" {
			it.Name = "-"
		}
		if it.UnitPriceCents < 0 || it.UnitPriceCents > MaxPriceCents {
			return nil, apierr.Invalid("items", apierr.OutOfRange)
		}
		it.OriginalPriceCents = it.UnitPriceCents
		it.TotalPriceCents = it.Quantity * it.UnitPriceCents
		out[i] = it
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
