package products

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/ids"
	"oficina/schema/page"
	"oficina/streams"
)

// Reasons of stock movements.
const (
	ReasonAdjustment   = "adjustment"
	ReasonSale         = "sale"
	ReasonSaleVersion  = "sale_version"
	ReasonSaleCanceled = "sale_canceled"
)

// StockMovementReason is why stock moved.
type StockMovementReason string

// Values are the reasons.
func (StockMovementReason) Values() []string {
	return []string{ReasonAdjustment, ReasonSale, ReasonSaleVersion, ReasonSaleCanceled}
}

// MovementRow is an entry of the stock ledger.
type MovementRow struct {
	bun.BaseModel `bun:"table:stock_movements,alias:m"`

	ID           string    `bun:"id,pk"`
	CompanyID    string    `bun:"company_id"`
	ProductID    string    `bun:"product_id"`
	VariationID  *string   `bun:"variation_id"`
	Quantity     int64     `bun:"quantity"`
	BalanceAfter int64     `bun:"balance_after"`
	Reason       string    `bun:"reason"`
	SaleID       *string   `bun:"sale_id"`
	CreatedAt    time.Time `bun:"created_at"`
}

// StockMovement is the representation of a movement (stock.changed events,
// admin API). A ledger movement has only created_at (spec 2.1).
type StockMovement struct {
	Object       string              `json:"object" const:"stock_movement"`
	ID           string              `json:"id"`
	ProductID    string              `json:"product_id"`
	VariationID  *string             `json:"variation_id"`
	Quantity     int64               `json:"quantity"`
	BalanceAfter int64               `json:"balance_after"`
	Reason       StockMovementReason `json:"reason"`
	SaleID       *string             `json:"sale_id"`
	CreatedAt    apitime.Time        `json:"created_at"`
}

// View renders the movement.
func (m *MovementRow) View() StockMovement {
	return StockMovement{Object: "stock_movement", ID: m.ID, ProductID: m.ProductID, VariationID: m.VariationID,
		Quantity: m.Quantity, BalanceAfter: m.BalanceAfter, Reason: StockMovementReason(m.Reason), SaleID: m.SaleID, CreatedAt: apitime.At(m.CreatedAt)}
}

// MovementChanges are the stock.changed events of movements.
func MovementChanges(ms []MovementRow) []streams.Change {
	out := make([]streams.Change, len(ms))
	for i := range ms {
		out[i] = streams.Change{Type: EventStockChanged, Object: ms[i].View()}
	}
	return out
}

// Delta is a signed stock change of a product or one of its variations.
type Delta struct {
	ProductID   string
	VariationID *string
	Quantity    int64
}

func (d Delta) key() string {
	if d.VariationID != nil {
		return d.ProductID + "/" + *d.VariationID
	}
	return d.ProductID
}

// Merge adds up deltas of the same product or variation and drops zeros,
// in a stable order (product, then variation) so that concurrent writers
// lock stock rows in the same order and cannot deadlock.
func Merge(ds []Delta) []Delta {
	at := map[string]int{}
	var out []Delta
	for _, d := range ds {
		if i, ok := at[d.key()]; ok {
			out[i].Quantity += d.Quantity
			continue
		}
		at[d.key()] = len(out)
		out = append(out, d)
	}
	out = slices.DeleteFunc(out, func(d Delta) bool { return d.Quantity == 0 })
	slices.SortFunc(out, func(a, b Delta) int { return cmp.Compare(a.key(), b.key()) })
	return out
}

// Move applies deltas to the stock of products and variations and writes
// one ledger movement each (stock may go negative: a sale is never refused
// for lack of stock). A product or variation deleted meanwhile is skipped.
// The caller records MovementChanges of the result in its write.
func Move(ctx context.Context, tx bun.IDB, companyID string, deltas []Delta, reason string, saleID *string, now time.Time) ([]MovementRow, error) {
	out, err := Apply(ctx, tx, companyID, deltas, reason, saleID, now)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(&out).Exec(ctx); err != nil {
		return nil, fmt.Errorf("products: stock movements: %w", err)
	}
	return out, nil
}

// Apply is Move without storing the movements: the caller inserts them
// (sales batch them with the rest of their write). The stock rows are
// changed in Merge's order by one call of a function
// (sql/oficina_move_stock.sql): one round trip, and a plan PostgreSQL keeps.
func Apply(ctx context.Context, tx bun.IDB, companyID string, deltas []Delta, reason string, saleID *string, now time.Time) ([]MovementRow, error) {
	deltas = Merge(deltas)
	if len(deltas) == 0 {
		return []MovementRow{}, nil
	}
	pids, vids, qs := make([]string, len(deltas)), make([]*string, len(deltas)), make([]int64, len(deltas))
	for i, d := range deltas {
		pids[i], vids[i], qs[i] = d.ProductID, d.VariationID, d.Quantity
	}
	var rows []struct {
		Ord     int   `bun:"ord"`
		Balance int64 `bun:"balance"`
	}
	err := tx.NewRaw("SELECT ord, balance FROM oficina_move_stock(?, ?, ?)",
		pgdialect.Array(pids), pgdialect.Array(vids), pgdialect.Array(qs)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("products: move stock: %w", err)
	}
	out := make([]MovementRow, 0, len(rows))
	for _, r := range rows {
		d := deltas[r.Ord-1]
		out = append(out, MovementRow{ID: ids.New("stk"), CompanyID: companyID, ProductID: d.ProductID, VariationID: d.VariationID,
			Quantity: d.Quantity, BalanceAfter: r.Balance, Reason: reason, SaleID: saleID, CreatedAt: now})
	}
	return out, nil
}

// SaleBalance is the net quantity the ledger moved for a sale, per product
// and variation (negative: deducted). Cancel and new versions return or
// adjust exactly this.
func SaleBalance(ctx context.Context, tx bun.IDB, saleID string) ([]Delta, error) {
	var rows []struct {
		ProductID   string  `bun:"product_id"`
		VariationID *string `bun:"variation_id"`
		Quantity    int64   `bun:"quantity"`
	}
	err := tx.NewSelect().Model((*MovementRow)(nil)).Column("product_id", "variation_id").ColumnExpr("sum(quantity) AS quantity").
		Where("sale_id = ?", saleID).Group("product_id", "variation_id").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("products: sale stock: %w", err)
	}
	out := make([]Delta, 0, len(rows))
	for _, r := range rows {
		out = append(out, Delta{ProductID: r.ProductID, VariationID: r.VariationID, Quantity: r.Quantity})
	}
	return out, nil
}

// AdjustInput is a manual stock adjustment (dashboard action).
type AdjustInput struct {
	VariationID *string `json:"variation_id"`
	Quantity    int64   `json:"quantity"` // signed change
}

// Adjust changes a product's (or variation's) stock and records
// stock.changed.
func Adjust(ctx context.Context, w *streams.Write, productID string, in AdjustInput) (*MovementRow, error) {
	p, err := Get(ctx, w.Tx, productID, false)
	if err != nil {
		return nil, err
	}
	var f apierr.Fields
	if in.Quantity == 0 || in.Quantity < -MaxStock || in.Quantity > MaxStock {
		f.Add("quantity", apierr.OutOfRange)
	}
	switch {
	case len(p.Variations) > 0 && in.VariationID == nil:
		f.Add("variation_id", apierr.Required)
	case len(p.Variations) == 0 && in.VariationID != nil:
		f.Add("variation_id", apierr.NotAllowed)
	case in.VariationID != nil && !slices.ContainsFunc(p.Variations, func(v VariationRow) bool { return v.ID == *in.VariationID }):
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	ms, err := Move(ctx, w.Tx, w.CompanyID, []Delta{{ProductID: p.ID, VariationID: in.VariationID, Quantity: in.Quantity}}, ReasonAdjustment, nil, w.At)
	if err != nil {
		return nil, err
	}
	if _, err := streams.Record(ctx, w, MovementChanges(ms)...); err != nil {
		return nil, fmt.Errorf("products: events: %w", err)
	}
	return &ms[0], nil
}

// ListMovements lists a product's ledger, newest first.
func ListMovements(ctx context.Context, tx bun.IDB, productID string, p page.Params) (page.List[StockMovement], error) {
	var rows []MovementRow
	if err := p.Apply(tx.NewSelect().Model(&rows).Where("m.product_id = ?", productID), "m.id").Scan(ctx); err != nil {
		return page.List[StockMovement]{}, fmt.Errorf("products: movements: %w", err)
	}
	l := page.Wrap(p, rows)
	out := page.List[StockMovement]{Object: "list", HasMore: l.HasMore, Data: make([]StockMovement, len(l.Data))}
	for i := range l.Data {
		out.Data[i] = l.Data[i].View()
	}
	return out, nil
}
