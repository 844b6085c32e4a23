// Package products holds the company's catalogue: products with optional
// variations (each with its own price, promotional price and stock),
// services, and the stock ledger. Sales read prices from here and move
// stock through Move; every movement emits stock.changed.
package products

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/apitime"
	"oficina/schema/db"
)

// Row is a stored product.
type Row struct {
	bun.BaseModel `bun:"table:products,alias:p"`

	ID                    string    `bun:"id,pk"`
	CompanyID             string    `bun:"company_id"`
	Name                  string    `bun:"name"`
	SKU                   *string   `bun:"sku"`
	PriceCents            int64     `bun:"price_cents"`
	PromotionalPriceCents *int64    `bun:"promotional_price_cents"`
	StockQuantity         int64     `bun:"stock_quantity"`
	Active                bool      `bun:"active"`
	CreatedAt             time.Time `bun:"created_at"`
	UpdatedAt             time.Time `bun:"updated_at"`

	// Filled by Lookup: whether the product has variations, and the
	// variations asked for (JSON rows).
	HasVariations bool            `bun:"has_variations,scanonly"`
	Picked        json.RawMessage `bun:"picked,scanonly"`
	Variations    []VariationRow  `bun:"-"`
}

// VariationRow is a variation of a product (size, colour, …).
type VariationRow struct {
	bun.BaseModel `bun:"table:product_variations,alias:v"`

	ID                    string    `bun:"id,pk" json:"id"`
	CompanyID             string    `bun:"company_id" json:"company_id"`
	ProductID             string    `bun:"product_id" json:"product_id"`
	Name                  string    `bun:"name" json:"name"`
	SKU                   *string   `bun:"sku" json:"sku"`
	PriceCents            int64     `bun:"price_cents" json:"price_cents"`
	PromotionalPriceCents *int64    `bun:"promotional_price_cents" json:"promotional_price_cents"`
	StockQuantity         int64     `bun:"stock_quantity" json:"stock_quantity"`
	Position              int       `bun:"position" json:"position"`
	CreatedAt             time.Time `bun:"created_at" json:"created_at"`
	UpdatedAt             time.Time `bun:"updated_at" json:"updated_at"`
}

// SalePrice is what a catalog sale item charges: the promotional price when
// there is one, else the price.
func SalePrice(price int64, promo *int64) int64 {
	if promo != nil {
		return *promo
	}
	return price
}

// Product is the representation of a product (admin API and events).
type Product struct {
	Object                string             `json:"object" const:"product"`
	ID                    string             `json:"id"`
	Name                  string             `json:"name"`
	SKU                   *string            `json:"sku"`
	PriceCents            int64              `json:"price_cents"`
	PromotionalPriceCents *int64             `json:"promotional_price_cents"`
	StockQuantity         int64              `json:"stock_quantity"`
	Active                bool               `json:"active"`
	Variations            []ProductVariation `json:"variations"`
	CreatedAt             apitime.Time       `json:"created_at"`
	UpdatedAt             apitime.Time       `json:"updated_at"`
}

// ProductVariation is a variation inside a product's view.
type ProductVariation struct {
	Object                string  `json:"object" const:"product_variation"`
	ID                    string  `json:"id"`
	Name                  string  `json:"name"`
	SKU                   *string `json:"sku"`
	PriceCents            int64   `json:"price_cents"`
	PromotionalPriceCents *int64  `json:"promotional_price_cents"`
	StockQuantity         int64   `json:"stock_quantity"`
}

// View renders the product; a product with variations shows the sum of
// their stock as its own.
func (p *Row) View() Product {
	v := Product{Object: "product", ID: p.ID, Name: p.Name, SKU: p.SKU, PriceCents: p.PriceCents,
		PromotionalPriceCents: p.PromotionalPriceCents, StockQuantity: p.StockQuantity, Active: p.Active,
		Variations: make([]ProductVariation, len(p.Variations)),
		CreatedAt:  apitime.At(p.CreatedAt), UpdatedAt: apitime.At(p.UpdatedAt)}
	if len(p.Variations) > 0 {
		v.StockQuantity = 0
	}
	for i, x := range p.Variations {
		v.Variations[i] = ProductVariation{Object: "product_variation", ID: x.ID, Name: x.Name, SKU: x.SKU,
			PriceCents: x.PriceCents, PromotionalPriceCents: x.PromotionalPriceCents, StockQuantity: x.StockQuantity}
		v.StockQuantity += x.StockQuantity
	}
	return v
}

// Get reads a product with its variations; forUpdate locks the product row.
func Get(ctx context.Context, tx bun.IDB, id string, forUpdate bool) (*Row, error) {
	p, err := db.ByID[Row](ctx, tx, "prd", id, forUpdate)
	if err != nil {
		return nil, err
	}
	if err := tx.NewSelect().Model(&p.Variations).Where("v.product_id = ?", id).
		OrderExpr("v.position, v.id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("products: variations: %w", err)
	}
	return p, nil
}

// Lookup reads, in one query, the products with the given ids (missing ones
// are absent from the map), each with HasVariations set, and those of the
// given variations that belong to them. Sales call it once per write.
func Lookup(ctx context.Context, tx bun.IDB, productIDs, variationIDs []string) (map[string]*Row, map[string]*VariationRow, error) {
	ps := map[string]*Row{}
	vs := map[string]*VariationRow{}
	if len(productIDs) == 0 {
		return ps, vs, nil
	}
	if variationIDs == nil {
		variationIDs = []string{}
	}
	// A function, so PostgreSQL keeps the plan of a query every sale runs
	// (sql/oficina_product_lookup.sql).
	var rows []Row
	err := tx.NewRaw("SELECT * FROM oficina_product_lookup(?, ?)", pgdialect.Array(productIDs), pgdialect.Array(variationIDs)).
		Scan(ctx, &rows)
	if err != nil {
		return nil, nil, fmt.Errorf("products: lookup: %w", err)
	}
	for i := range rows {
		p := &rows[i]
		ps[p.ID] = p
		var picked []VariationRow
		if err := json.Unmarshal(p.Picked, &picked); err != nil {
			return nil, nil, fmt.Errorf("products: lookup variations: %w", err)
		}
		for j := range picked {
			vs[picked[j].ID] = &picked[j]
		}
	}
	return ps, vs, nil
}
