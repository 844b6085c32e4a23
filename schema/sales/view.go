package sales

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/finance"
	"oficina/schema/ids"
	"oficina/tenant"
)

// Sale is the GET representation of a sale. It renders in two ways: with
// finance (account_id and finance_transactions present, for a key with
// finance:read whose member has finance access) and without (those two
// keys absent and payment_plan.account_id null), which is also what every
// sale.* event carries (spec 6.3 rule 6).
type Sale struct {
	Object                string            `json:"object" const:"sale"`
	ID                    string            `json:"id"`
	Number                *int64            `json:"number"`
	Version               int               `json:"version"`
	ClientID              *string           `json:"client_id"`
	SellerID              *string           `json:"seller_id"`
	QuoteID               *string           `json:"quote_id"`
	ContractID            *string           `json:"contract_id"`
	Items                 []SaleItem        `json:"items"`
	PaymentPlan           PaymentPlan       `json:"payment_plan"`
	PaymentStatus         PaymentStatus     `json:"payment_status"`
	PaidCents             int64             `json:"paid_cents"`
	RemainingCents        int64             `json:"remaining_cents"`
	Overdue               bool              `json:"overdue"`
	SubtotalCents         int64             `json:"subtotal_cents"`
	DiscountCents         int64             `json:"discount_cents"`
	ShippingCents         int64             `json:"shipping_cents"`
	AdditionalCostsCents  int64             `json:"additional_costs_cents"`
	TotalCents            int64             `json:"total_cents"`
	Installments          []Installment     `json:"installments"`
	Payments              []Payment         `json:"payments"`
	SaleDate              apitime.Date      `json:"sale_date"`
	EstimatedDeliveryDate *apitime.Time     `json:"estimated_delivery_date"`
	Notes                 string            `json:"notes"`
	ProductionStatus      *ProductionStatus `json:"production_status"`
	ProductionNotes       string            `json:"production_notes"`
	InvoiceLocked         bool              `json:"invoice_locked"`
	CanceledAt            *apitime.Time     `json:"canceled_at"`
	CancelReason          *string           `json:"cancel_reason"`
	CreatedAt             apitime.Time      `json:"created_at"`
	UpdatedAt             apitime.Time      `json:"updated_at"`
	// Finance fields: only in the rendering with finance, where both are
	// present (account_id may be null). The outer pointer is nil, and the
	// key omitted, in the rendering without finance.
	AccountID           **string                        `json:"account_id,omitempty"`
	FinanceTransactions *[]finance.FinancialTransaction `json:"finance_transactions,omitempty"`
}

// SaleItem is a sale item (2.6).
type SaleItem struct {
	ID                 string       `json:"id"`
	Type               SaleItemType `json:"type"`
	Name               string       `json:"name"`
	Quantity           int64        `json:"quantity"`
	UnitPriceCents     int64        `json:"unit_price_cents"`
	OriginalPriceCents int64        `json:"original_price_cents"`
	TotalPriceCents    int64        `json:"total_price_cents"`
	ProductID          *string      `json:"product_id"`
	VariationID        *string      `json:"variation_id"`
}

// Installment is an installment (2.6).
type Installment struct {
	ID             string            `json:"id"`
	Kind           InstallmentKind   `json:"kind"`
	Status         InstallmentStatus `json:"status"`
	AmountCents    int64             `json:"amount_cents"`
	PaidCents      int64             `json:"paid_cents"`
	RemainingCents int64             `json:"remaining_cents"`
	DueDate        apitime.Date      `json:"due_date"`
	PaidDate       *apitime.Date     `json:"paid_date"`
}

// Payment is a payment (2.6).
type Payment struct {
	ID               string         `json:"id"`
	AmountCents      int64          `json:"amount_cents"`
	PaidAt           apitime.Date   `json:"paid_at"`
	PaymentMethod    *PaymentMethod `json:"payment_method"`
	CanceledAt       *apitime.Time  `json:"canceled_at"`
	CancelReason     *string        `json:"cancel_reason"`
	ReceiptNumber    *string        `json:"receipt_number"`
	HasActiveInvoice bool           `json:"has_active_invoice"`
	CreatedAt        apitime.Time   `json:"created_at"`
}

// View renders the sale; withFinance chooses the rendering (see SaleView).
func (s *Row) View(withFinance bool) Sale {
	v := Sale{Object: "sale", ID: s.ID, Number: s.Number, Version: s.Version, ClientID: s.ClientID, SellerID: s.SellerID,
		QuoteID: s.QuoteID, ContractID: s.ContractID, PaymentPlan: s.PaymentPlan, PaymentStatus: s.PaymentStatus,
		PaidCents: s.PaidCents, RemainingCents: s.TotalCents - s.PaidCents, Overdue: s.Overdue,
		SubtotalCents: s.SubtotalCents, DiscountCents: s.DiscountCents, ShippingCents: s.ShippingCents,
		AdditionalCostsCents: s.AdditionalCostsCents, TotalCents: s.TotalCents, SaleDate: s.SaleDate,
		EstimatedDeliveryDate: at(s.EstimatedDeliveryDate), Notes: s.Notes, ProductionStatus: s.ProductionStatus,
		ProductionNotes: s.ProductionNotes, InvoiceLocked: s.InvoiceLocked, CanceledAt: at(s.CanceledAt),
		CancelReason: s.CancelReason, CreatedAt: apitime.At(s.CreatedAt), UpdatedAt: apitime.At(s.UpdatedAt),
		Items: make([]SaleItem, len(s.Items)), Installments: make([]Installment, len(s.Installments)),
		Payments: make([]Payment, len(s.Payments))}
	for i, it := range s.Items {
		v.Items[i] = it.view()
	}
	for i, n := range s.Installments {
		v.Installments[i] = Installment{ID: n.ID, Kind: n.Kind, Status: n.Status, AmountCents: n.AmountCents,
			PaidCents: n.PaidCents, RemainingCents: n.Remaining(), DueDate: n.DueDate, PaidDate: n.PaidDate}
	}
	for i, y := range s.Payments {
		v.Payments[i] = Payment{ID: y.ID, AmountCents: y.AmountCents, PaidAt: y.PaidAt, PaymentMethod: y.PaymentMethod,
			CanceledAt: at(y.CanceledAt), CancelReason: y.CancelReason, ReceiptNumber: y.ReceiptNumber,
			HasActiveInvoice: y.HasActiveInvoice, CreatedAt: apitime.At(y.CreatedAt)}
	}
	if withFinance {
		acc := s.AccountID
		txs := make([]finance.FinancialTransaction, len(s.Transactions))
		for i := range s.Transactions {
			txs[i] = s.Transactions[i].View()
		}
		v.AccountID, v.FinanceTransactions = &acc, &txs
	} else {
		v.PaymentPlan.AccountID = nil
	}
	return v
}

func (it *ItemRow) view() SaleItem {
	return SaleItem{ID: it.ID, Type: it.Type, Name: it.Name, Quantity: it.Quantity, UnitPriceCents: it.UnitPriceCents,
		OriginalPriceCents: it.OriginalPriceCents, TotalPriceCents: it.TotalPriceCents, ProductID: it.ProductID,
		VariationID: it.VariationID}
}

func at(t *time.Time) *apitime.Time {
	if t == nil {
		return nil
	}
	v := apitime.At(*t)
	return &v
}

// LoadOptions choose how Load reads a sale.
type LoadOptions struct {
	ForUpdate bool // lock the sale row until the transaction ends
	Finance   bool // also read its finance transactions
}

// Load reads a sale with its current items, installments and payments (one
// row, see Sale.ItemsDoc); a malformed or another company's id is 404.
func Load(ctx context.Context, tx bun.IDB, id string, o LoadOptions) (*Row, error) {
	if !ids.Valid("sale", id) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	s := new(Row)
	q := tx.NewSelect().Model(s).Where("s.id = ?", id)
	if o.ForUpdate {
		q = withTimezone(q).For("UPDATE OF s")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, apierr.NoRows(err)
	}
	if err := s.decodeChildren(); err != nil {
		return nil, err
	}
	if o.Finance {
		if err := s.loadTransactions(ctx, tx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Read is GET /sales/{id} without finance: the sale of companyID read by
// one statement on the pool, outside any transaction — a function that
// scopes its own implicit transaction to the company before reading
// (sql/oficina_sale_get.sql), so row-level security applies as in
// tenant.Tx at a third of the round trips. A malformed or another company's
// id is 404.
func Read(ctx context.Context, pool *bun.DB, companyID, id string) (*Row, error) {
	if companyID == "" {
		return nil, tenant.ErrNoCompany
	}
	if !ids.Valid("sale", id) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	s := new(Row)
	if err := pool.NewRaw("SELECT * FROM oficina_sale_get(?, ?)", companyID, id).Scan(ctx, s); err != nil {
		return nil, apierr.NoRows(err)
	}
	if err := s.decodeChildren(); err != nil {
		return nil, err
	}
	return s, nil
}

// withTimezone adds the company's time zone to a select of sales.
func withTimezone(q *bun.SelectQuery) *bun.SelectQuery {
	return q.ColumnExpr("s.*").ColumnExpr("(SELECT c.timezone FROM companies c WHERE c.id = s.company_id) AS company_timezone")
}

// decodeChildren reads the children from the sale row's documents.
func (s *Row) decodeChildren() error {
	s.Items, s.Installments, s.Payments = nil, nil, nil
	if err := json.Unmarshal(s.ItemsDoc, &s.Items); err != nil {
		return fmt.Errorf("sales: decode items: %w", err)
	}
	if err := json.Unmarshal(s.InstallmentsDoc, &s.Installments); err != nil {
		return fmt.Errorf("sales: decode installments: %w", err)
	}
	if err := json.Unmarshal(s.PaymentsDoc, &s.Payments); err != nil {
		return fmt.Errorf("sales: decode payments: %w", err)
	}
	return nil
}

// encodeChildren writes the children into the sale row's documents, in
// the order they are read.
func (s *Row) encodeChildren() error {
	s.normalize()
	var err error
	if s.ItemsDoc, err = json.Marshal(nonNil(s.Items)); err != nil {
		return fmt.Errorf("sales: encode items: %w", err)
	}
	if s.InstallmentsDoc, err = json.Marshal(nonNil(s.Installments)); err != nil {
		return fmt.Errorf("sales: encode installments: %w", err)
	}
	if s.PaymentsDoc, err = json.Marshal(nonNil(s.Payments)); err != nil {
		return fmt.Errorf("sales: encode payments: %w", err)
	}
	return nil
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// refreshDocs rebuilds a sale's documents from its child tables after a
// write that changed children directly (invoice flags, receipts).
func refreshDocs(ctx context.Context, tx bun.IDB, saleID string) error {
	if _, err := tx.NewRaw("SELECT oficina_sale_refresh_docs(?)", saleID).Exec(ctx); err != nil {
		return fmt.Errorf("sales: refresh documents: %w", err)
	}
	return nil
}

func (s *Row) loadTransactions(ctx context.Context, tx bun.IDB) error {
	s.Transactions = nil
	if err := tx.NewSelect().Model(&s.Transactions).Where("sale_id = ?", s.ID).OrderExpr("id").Scan(ctx); err != nil {
		return fmt.Errorf("sales: finance transactions: %w", err)
	}
	return nil
}

// LoadFinance reads the sale's finance transactions (for the rendering
// with finance after a write that did not read them).
func LoadFinance(ctx context.Context, tx bun.IDB, s *Row) error { return s.loadTransactions(ctx, tx) }
