// Package quotes holds quotes: the commercial proposals that an approved
// status lets the company convert into a service order or a sale (each at
// most once). Their full state machine is not in the spec; docs/api.md
// records what Oficina does.
package quotes

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apitime"
	"oficina/schema/db"
)

// Statuses (QuoteStatus).
const (
	StatusDraft    = "draft"
	StatusSent     = "sent"
	StatusApproved = "approved"
	StatusRejected = "rejected"
	StatusCanceled = "canceled"
	StatusExpired  = "expired"
)

// QuoteStatus is a quote's status.
type QuoteStatus string

// Values are the statuses.
func (QuoteStatus) Values() []string { return slices.Clone(Statuses) }

// QuoteItem is a quote line.
type QuoteItem struct {
	Description    string  `json:"description"`
	Quantity       float64 `json:"quantity"`
	UnitPriceCents int64   `json:"unit_price_cents"`
	TotalCents     int64   `json:"total_cents"`
	ProductID      *string `json:"product_id,omitempty"`
	VariationID    *string `json:"variation_id,omitempty"`
}

// Row is a stored quote.
type Row struct {
	bun.BaseModel `bun:"table:quotes"`

	ID                   string          `bun:"id,pk"`
	CompanyID            string          `bun:"company_id"`
	Number               int64           `bun:"number"`
	ClientID             *string         `bun:"client_id"`
	ClientName           string          `bun:"client_name"`
	Status               string          `bun:"status"`
	Items                []QuoteItem     `bun:"items,type:jsonb"`
	SubtotalCents        int64           `bun:"subtotal_cents"`
	DiscountCents        int64           `bun:"discount_cents"`
	AdditionalCostsCents int64           `bun:"additional_costs_cents"`
	TotalCents           int64           `bun:"total_cents"`
	RecurringTotalCents  int64           `bun:"recurring_total_cents"`
	PaymentPlan          json.RawMessage `bun:"payment_plan,type:jsonb"`
	Notes                string          `bun:"notes"`
	ValidUntil           *time.Time      `bun:"valid_until"`
	ApprovedAt           *time.Time      `bun:"approved_at"`
	RejectedAt           *time.Time      `bun:"rejected_at"`
	ConvertedOrderID     *string         `bun:"converted_order_id"`
	ConvertedSaleID      *string         `bun:"converted_sale_id"`
	CreatedAt            time.Time       `bun:"created_at"`
	UpdatedAt            time.Time       `bun:"updated_at"`
}

// Quote is the GET representation of a quote.
type Quote struct {
	Object               string         `json:"object" const:"quote"`
	ID                   string         `json:"id"`
	Number               int64          `json:"number"`
	ClientID             *string        `json:"client_id"`
	ClientName           string         `json:"client_name"`
	Status               QuoteStatus    `json:"status"`
	Items                []QuoteItem    `json:"items"`
	SubtotalCents        int64          `json:"subtotal_cents"`
	DiscountCents        int64          `json:"discount_cents"`
	AdditionalCostsCents int64          `json:"additional_costs_cents"`
	TotalCents           int64          `json:"total_cents"`
	RecurringTotalCents  int64          `json:"recurring_total_cents"`
	PaymentPlan          RawPaymentPlan `json:"payment_plan" api:"nullable"`
	Notes                string         `json:"notes"`
	ValidUntil           *apitime.Time  `json:"valid_until"`
	ApprovedAt           *apitime.Time  `json:"approved_at"`
	RejectedAt           *apitime.Time  `json:"rejected_at"`
	CreatedAt            apitime.Time   `json:"created_at"`
	UpdatedAt            apitime.Time   `json:"updated_at"`
}

// View renders the GET representation.
func (q *Row) View() Quote {
	items := q.Items
	if items == nil {
		items = []QuoteItem{}
	}
	return Quote{Object: "quote", ID: q.ID, Number: q.Number, ClientID: q.ClientID, ClientName: q.ClientName,
		Status: QuoteStatus(q.Status), Items: items, SubtotalCents: q.SubtotalCents, DiscountCents: q.DiscountCents,
		AdditionalCostsCents: q.AdditionalCostsCents, TotalCents: q.TotalCents, RecurringTotalCents: q.RecurringTotalCents,
		PaymentPlan: RawPaymentPlan(q.PaymentPlan), Notes: q.Notes, ValidUntil: at(q.ValidUntil), ApprovedAt: at(q.ApprovedAt), RejectedAt: at(q.RejectedAt),
		CreatedAt: apitime.At(q.CreatedAt), UpdatedAt: apitime.At(q.UpdatedAt)}
}

func at(t *time.Time) *apitime.Time {
	if t == nil {
		return nil
	}
	v := apitime.At(*t)
	return &v
}

// Get reads a quote; forUpdate locks it (conversions).
func Get(ctx context.Context, tx bun.IDB, id string, forUpdate bool) (*Row, error) {
	q, err := db.ByID[Row](ctx, tx, "quo", id, forUpdate)
	if err != nil {
		return nil, err
	}
	return q, nil
}
