package sales

import (
	"context"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/ids"
	"oficina/schema/products"
)

// priceItems turns request items into sale items of the given version:
// custom items as sent; catalog items with the product's name and
// promotional price (a variation's, when the product has variations, which
// then must be chosen). A product or variation of another company, or a
// variation of another product, is 404. in has passed validation.
func priceItems(ctx context.Context, tx bun.IDB, s *Row, version int, param string, in []SaleItemInput) ([]ItemRow, error) {
	var pids, vids []string
	for _, it := range in {
		if it.Type != ItemCatalog {
			continue
		}
		if !ids.Valid("prd", *it.ProductID) || (it.VariationID != nil && !ids.Valid("pvar", *it.VariationID)) {
			return nil, apierr.New(apierr.ResourceNotFound)
		}
		pids = append(pids, *it.ProductID)
		if it.VariationID != nil {
			vids = append(vids, *it.VariationID)
		}
	}
	ps, vs, err := products.Lookup(ctx, tx, pids, vids)
	if err != nil {
		return nil, err
	}
	out := make([]ItemRow, len(in))
	var f apierr.Fields
	for i, it := range in {
		p := param + "[" + strconv.Itoa(i) + "]"
		q := int64(1)
		if it.Quantity != nil {
			q = *it.Quantity
		}
		item := ItemRow{ID: ids.New("sli"), CompanyID: s.CompanyID, SaleID: s.ID, Version: version, Position: i,
			Type: it.Type, Quantity: q}
		if it.Type == ItemCustom {
			item.Name, item.UnitPriceCents = strings.TrimSpace(*it.Name), *it.UnitPriceCents
			item.OriginalPriceCents = item.UnitPriceCents
		} else {
			prod := ps[*it.ProductID]
			if prod == nil {
				return nil, apierr.New(apierr.ResourceNotFound)
			}
			item.ProductID, item.Name = &prod.ID, prod.Name
			item.UnitPriceCents = products.SalePrice(prod.PriceCents, prod.PromotionalPriceCents)
			item.OriginalPriceCents = prod.PriceCents
			switch {
			case it.VariationID != nil:
				v := vs[*it.VariationID]
				if v == nil || v.ProductID != prod.ID {
					return nil, apierr.New(apierr.ResourceNotFound)
				}
				item.VariationID, item.Name = &v.ID, prod.Name+" - "+v.Name
				item.UnitPriceCents = products.SalePrice(v.PriceCents, v.PromotionalPriceCents)
				item.OriginalPriceCents = v.PriceCents
			case prod.HasVariations:
				f.Add(p+".variation_id", apierr.Required)
			}
			if !prod.Active {
				f.Add(p+".product_id", apierr.InvalidValue) // removed from the catalogue
			}
		}
		item.TotalPriceCents = item.Quantity * item.UnitPriceCents
		out[i] = item
	}
	return out, f.Err()
}

// totals sets the sale's subtotal and total from its items, discount,
// shipping and additional costs; a discount above the rest is 422.
func totals(s *Row) error {
	s.SubtotalCents = 0
	for _, it := range s.Items {
		s.SubtotalCents += it.TotalPriceCents
	}
	s.TotalCents = s.SubtotalCents - s.DiscountCents + s.ShippingCents + s.AdditionalCostsCents
	if s.TotalCents < 0 {
		return apierr.Invalid("discount_cents", apierr.OutOfRange)
	}
	return nil
}

// stockWanted is what the sale's ledger should have moved: each catalog
// item's quantity out, unless the sale does not decrement stock or is
// canceled.
func stockWanted(s *Row) []products.Delta {
	if !s.DecrementStock || s.CanceledAt != nil {
		return nil
	}
	var out []products.Delta
	for _, it := range s.Items {
		if it.Type == ItemCatalog && it.ProductID != nil {
			out = append(out, products.Delta{ProductID: *it.ProductID, VariationID: it.VariationID, Quantity: -it.Quantity})
		}
	}
	return out
}
