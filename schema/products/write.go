package products

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/apierr"
	"oficina/schema/db"
	"oficina/schema/field"
	"oficina/schema/ids"
	"oficina/streams"
)

// Limits of catalogue fields.
const (
	MaxName       = 200
	MaxPriceCents = 100_000_000_000 // one billion in major units
	MaxStock      = 1_000_000_000
	MaxVariations = 100
)

// ProductCreate creates or changes a product (dashboard action). On update,
// omitted fields stay; variations, when sent, is the complete list:
// entries with an id change that variation, entries without one are added
// and variations left out are deleted. Stock is set only when a product or
// variation is created (stock_quantity, recorded as an adjustment); later
// changes go through Adjust.
type ProductCreate struct {
	Name                  field.Opt[string] `json:"name"`
	SKU                   field.Opt[string] `json:"sku" api:"nullable"`
	PriceCents            field.Opt[int64]  `json:"price_cents"`
	PromotionalPriceCents field.Opt[int64]  `json:"promotional_price_cents" api:"nullable"`
	Active                field.Opt[bool]   `json:"active"`
	StockQuantity         *int64            `json:"stock_quantity"`
	Variations            *[]VariationInput `json:"variations"`
}

// VariationInput is one variation of ProductCreate.
type VariationInput struct {
	ID                    *string `json:"id"`
	Name                  string  `json:"name"`
	SKU                   *string `json:"sku"`
	PriceCents            *int64  `json:"price_cents"` // default: the product's price
	PromotionalPriceCents *int64  `json:"promotional_price_cents"`
	StockQuantity         *int64  `json:"stock_quantity"` // new variations only
}

func (in *ProductCreate) apply(p *Row, creating bool, f *apierr.Fields) {
	if in.Name.Set {
		p.Name = strings.TrimSpace(in.Name.Value)
	}
	if p.Name == "" {
		f.Add("name", apierr.Required)
	} else if utf8.RuneCountInString(p.Name) > MaxName {
		f.Add("name", apierr.TooLong)
	}
	if in.SKU.Set {
		p.SKU = sku(in.SKU.Ptr())
		if p.SKU != nil && utf8.RuneCountInString(*p.SKU) > MaxName {
			f.Add("sku", apierr.TooLong)
		}
	}
	if in.PriceCents.Set {
		p.PriceCents = in.PriceCents.Value
		if in.PriceCents.Null {
			f.Add("price_cents", apierr.Required)
		}
	}
	checkPrice(f, "price_cents", p.PriceCents)
	if in.PromotionalPriceCents.Set {
		p.PromotionalPriceCents = in.PromotionalPriceCents.Ptr()
	}
	if p.PromotionalPriceCents != nil {
		checkPrice(f, "promotional_price_cents", *p.PromotionalPriceCents)
	}
	if in.Active.Set {
		p.Active = in.Active.Value
	}
	if in.StockQuantity != nil {
		if !creating {
			f.Add("stock_quantity", apierr.NotAllowed)
		} else if *in.StockQuantity < -MaxStock || *in.StockQuantity > MaxStock {
			f.Add("stock_quantity", apierr.OutOfRange)
		}
	}
}

func sku(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	v := strings.TrimSpace(*s)
	return &v
}

func checkPrice(f *apierr.Fields, param string, v int64) {
	if v < 0 || v > MaxPriceCents {
		f.Add(param, apierr.OutOfRange)
	}
}

// Create stores a product with its variations and initial stock, and
// records product.created and one stock.changed per initial stock.
func Create(ctx context.Context, w *streams.Write, in ProductCreate) (*Row, error) {
	p := &Row{ID: ids.New("prd"), CompanyID: w.CompanyID, Active: true, CreatedAt: w.At, UpdatedAt: w.At}
	var f apierr.Fields
	in.apply(p, true, &f)
	if in.StockQuantity != nil && in.Variations != nil && len(*in.Variations) > 0 && *in.StockQuantity != 0 {
		f.Add("stock_quantity", apierr.NotAllowed) // stock lives on the variations
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if _, err := w.Tx.NewInsert().Model(p).Exec(ctx); err != nil {
		return nil, conflictOr(err, "products: create")
	}
	var deltas []Delta
	if in.StockQuantity != nil && *in.StockQuantity != 0 {
		deltas = append(deltas, Delta{ProductID: p.ID, Quantity: *in.StockQuantity})
	}
	vd, err := syncVariations(ctx, w.Tx, p, in.Variations, w.At)
	if err != nil {
		return nil, err
	}
	return p, finish(ctx, w, p, append(deltas, vd...), streams.Change{Type: EventProductCreated}, nil)
}

// Update changes a product (dashboard action) and records product.updated
// when its representation changed.
func Update(ctx context.Context, w *streams.Write, id string, in ProductCreate) (*Row, error) {
	p, err := Get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	before := p.View()
	var f apierr.Fields
	in.apply(p, false, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	p.UpdatedAt = w.At
	if _, err := w.Tx.NewUpdate().Model(p).Column("name", "sku", "price_cents", "promotional_price_cents", "active", "updated_at").
		WherePK().Exec(ctx); err != nil {
		return nil, conflictOr(err, "products: update")
	}
	deltas, err := syncVariations(ctx, w.Tx, p, in.Variations, w.At)
	if err != nil {
		return nil, err
	}
	return p, finish(ctx, w, p, deltas, streams.Change{Type: EventProductUpdated}, &before)
}

// finish checks SKUs across the catalogue, applies initial stock, reloads
// the product and records its events.
func finish(ctx context.Context, w *streams.Write, p *Row, deltas []Delta, c streams.Change, before *Product) error {
	if err := checkSKUs(ctx, w.Tx, p.ID); err != nil {
		return err
	}
	moves, err := Move(ctx, w.Tx, w.CompanyID, deltas, ReasonAdjustment, nil, w.At)
	if err != nil {
		return err
	}
	fresh, err := Get(ctx, w.Tx, p.ID, false)
	if err != nil {
		return err
	}
	*p = *fresh
	c.Object = p.View()
	if before != nil {
		c.Before = *before
	}
	if _, err := streams.Record(ctx, w, append([]streams.Change{c}, MovementChanges(moves)...)...); err != nil {
		return fmt.Errorf("products: events: %w", err)
	}
	return nil
}

// syncVariations applies the complete list of variations (nil: unchanged)
// and returns the initial stock of the new ones.
func syncVariations(ctx context.Context, tx bun.IDB, p *Row, list *[]VariationInput, now time.Time) ([]Delta, error) {
	if list == nil {
		return nil, nil
	}
	in := *list
	var f apierr.Fields
	if len(in) > MaxVariations {
		f.Add("variations", apierr.OutOfRange)
		return nil, f.Err()
	}
	existing := map[string]*VariationRow{}
	for i := range p.Variations {
		existing[p.Variations[i].ID] = &p.Variations[i]
	}
	names := map[string]bool{}
	keep := map[string]bool{}
	var rows []VariationRow
	var deltas []Delta
	for i, x := range in {
		param := "variations[" + strconv.Itoa(i) + "]"
		v := &VariationRow{ID: ids.New("pvar"), CompanyID: p.CompanyID, ProductID: p.ID, PriceCents: p.PriceCents, CreatedAt: now}
		if x.ID != nil {
			old, ok := existing[*x.ID]
			if !ok {
				return nil, apierr.New(apierr.ResourceNotFound)
			}
			if keep[*x.ID] {
				f.Add(param+".id", apierr.InvalidValue) // listed twice
				continue
			}
			v = old
			keep[v.ID] = true
			if x.StockQuantity != nil {
				f.Add(param+".stock_quantity", apierr.NotAllowed)
			}
		} else if x.StockQuantity != nil && *x.StockQuantity != 0 {
			if *x.StockQuantity < -MaxStock || *x.StockQuantity > MaxStock {
				f.Add(param+".stock_quantity", apierr.OutOfRange)
			}
			deltas = append(deltas, Delta{ProductID: p.ID, VariationID: &v.ID, Quantity: *x.StockQuantity})
		}
		v.Name, v.SKU, v.Position, v.UpdatedAt = strings.TrimSpace(x.Name), sku(x.SKU), i, now
		if x.PriceCents != nil {
			v.PriceCents = *x.PriceCents
		}
		v.PromotionalPriceCents = x.PromotionalPriceCents
		switch {
		case v.Name == "":
			f.Add(param+".name", apierr.Required)
		case utf8.RuneCountInString(v.Name) > MaxName:
			f.Add(param+".name", apierr.TooLong)
		case names[strings.ToLower(v.Name)]:
			// A repeated variation name in one product is a conflict (part 7).
			return nil, apierr.New(apierr.Conflict)
		}
		names[strings.ToLower(v.Name)] = true
		checkPrice(&f, param+".price_cents", v.PriceCents)
		if v.PromotionalPriceCents != nil {
			checkPrice(&f, param+".promotional_price_cents", *v.PromotionalPriceCents)
		}
		rows = append(rows, *v)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	var gone []string
	for id := range existing {
		if !keep[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		if err := unlink(ctx, tx, "variation_id", gone); err != nil {
			return nil, err
		}
		if _, err := tx.NewDelete().Model((*VariationRow)(nil)).Where("id IN (?)", bun.List(gone)).Exec(ctx); err != nil {
			return nil, fmt.Errorf("products: delete variations: %w", err)
		}
	}
	// Names are unique per product: free the old names before writing.
	if len(keep) > 0 {
		if _, err := tx.NewUpdate().Model((*VariationRow)(nil)).Set("name = id").
			Where("id IN (?)", bun.List(slices.Collect(maps.Keys(keep)))).Exec(ctx); err != nil {
			return nil, fmt.Errorf("products: rename variations: %w", err)
		}
	}
	for i := range rows {
		var err error
		if keep[rows[i].ID] {
			_, err = tx.NewUpdate().Model(&rows[i]).Column("name", "sku", "price_cents", "promotional_price_cents", "position", "updated_at").
				WherePK().Exec(ctx)
		} else {
			_, err = tx.NewInsert().Model(&rows[i]).Exec(ctx)
		}
		if err != nil {
			return nil, conflictOr(err, "products: write variation")
		}
	}
	return deltas, nil
}

// checkSKUs refuses an internal code used twice in the company's catalogue,
// across products and variations (409, part 7).
func checkSKUs(ctx context.Context, tx bun.IDB, productID string) error {
	var dup bool
	err := tx.NewRaw(`SELECT EXISTS (
		WITH mine AS (
			SELECT sku FROM products WHERE id = ? AND sku IS NOT NULL
			UNION ALL SELECT sku FROM product_variations WHERE product_id = ? AND sku IS NOT NULL)
		SELECT 1 FROM mine GROUP BY sku HAVING count(*) > 1
		UNION ALL SELECT 1 FROM products o JOIN mine m ON m.sku = o.sku WHERE o.id <> ?
		UNION ALL SELECT 1 FROM product_variations o JOIN mine m ON m.sku = o.sku WHERE o.product_id <> ?)`,
		productID, productID, productID, productID).Scan(ctx, &dup)
	if err != nil {
		return fmt.Errorf("products: check sku: %w", err)
	}
	if dup {
		return apierr.New(apierr.Conflict)
	}
	return nil
}

func conflictOr(err error, what string) error {
	if db.IsUniqueViolation(err) {
		return apierr.Wrap(apierr.Conflict, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Delete removes a product (dashboard action). Sale items keep their name
// and lose product_id and variation_id, and the product's stock movements
// are deleted; the write yields only product.deleted (spec 6.3 rule 7).
func Delete(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	p, err := Get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if err := unlink(ctx, w.Tx, "product_id", []string{p.ID}); err != nil {
		return nil, err
	}
	if _, err := w.Tx.NewDelete().Model(p).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("products: delete: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventProductDeleted, Object: p.View()}); err != nil {
		return nil, fmt.Errorf("products: events: %w", err)
	}
	return p, nil
}

// unlink detaches deleted products or variations (column product_id or
// variation_id): sale items keep their name and lose the link (also in the
// copy each sale keeps on its row, see schema/sales), and their stock
// movements are deleted. No event: the deletion's own event says it all.
func unlink(ctx context.Context, tx bun.IDB, column string, deleted []string) error {
	// A deleted product takes its variations along: clear both links.
	set := "variation_id = NULL"
	if column == "product_id" {
		set += ", product_id = NULL"
	}
	var sales []string
	err := tx.NewRaw("WITH u AS (UPDATE sale_items SET "+set+" WHERE ? IN (?) RETURNING sale_id) SELECT DISTINCT sale_id FROM u",
		bun.Ident(column), bun.List(deleted)).Scan(ctx, &sales)
	if err != nil {
		return fmt.Errorf("products: unlink sale items: %w", err)
	}
	if _, err := tx.NewDelete().Model((*MovementRow)(nil)).Where("? IN (?)", bun.Ident(column), bun.List(deleted)).Exec(ctx); err != nil {
		return fmt.Errorf("products: delete movements: %w", err)
	}
	if len(sales) == 0 {
		return nil
	}
	if _, err := tx.NewRaw("SELECT oficina_sale_refresh_docs(id) FROM unnest(?::text[]) AS id", pgdialect.Array(sales)).Exec(ctx); err != nil {
		return fmt.Errorf("products: refresh sales: %w", err)
	}
	return nil
}
