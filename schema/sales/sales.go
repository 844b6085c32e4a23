// Package sales holds sales as the sales screen makes them: items (custom
// or from the catalogue), totals, the payment plan and its installments,
// payments applied to installments, versions, cancellation, and what they
// post to finance and to the stock ledger (spec 2.6, 3.2, 4.4).
//
// Every write locks the sale row FOR UPDATE first, changes an in-memory copy
// with the pure rules of ledger.go, writes back what differs, keeps finance
// and stock in step, and records its events in the same transaction, so a
// sale is never half-written and two writers never both spend one balance.
package sales

import (
	"database/sql/driver"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apitime"
	"oficina/schema/finance"
	"oficina/streams"
)

// Payment plan modes (2.6), declared with their type in finance.
const (
	ModePaidFull     = finance.ModePaidFull
	ModeEntryAndRest = finance.ModeEntryAndRest
	ModeInstallments = finance.ModeInstallments
	ModeUnpaid       = finance.ModeUnpaid
)

// Payment statuses (3.2).
const (
	StatusPending = "pending"
	StatusPartial = "partial"
	StatusPaid    = "paid"
)

// Installment kinds and statuses.
const (
	KindUpfront     = "upfront"     // the whole total of a paid_full sale
	KindEntry       = "entry"       // the down payment of entry_and_rest
	KindInstallment = "installment" // the plan's installments

	InstOpen     = "open"
	InstOverdue  = "overdue"
	InstPaid     = "paid"
	InstCanceled = "canceled"
)

// Item types.
const (
	ItemCustom  = "custom"
	ItemCatalog = "catalog"
)

// PaymentMethods are the values of payment_method (2.6).
var PaymentMethods = finance.PaymentMethods

// ProductionStatuses are the values of production_status.
var ProductionStatuses = []ProductionStatus{"pending", "in_production", "ready", "delivered"}

// Row is a stored sale. Items, Installments and Payments are loaded with it
// (one query, see Load); Transactions only when finance is shown.
type Row struct {
	bun.BaseModel `bun:"table:sales,alias:s"`

	ID                    string            `bun:"id,pk"`
	CompanyID             string            `bun:"company_id"`
	Number                *int64            `bun:"number"`
	Version               int               `bun:"version"`
	ClientID              *string           `bun:"client_id"`
	SellerID              *string           `bun:"seller_id"`
	QuoteID               *string           `bun:"quote_id"`
	ContractID            *string           `bun:"contract_id"`
	PaymentStatus         PaymentStatus     `bun:"payment_status"`
	Overdue               bool              `bun:"overdue"`
	SubtotalCents         int64             `bun:"subtotal_cents"`
	DiscountCents         int64             `bun:"discount_cents"`
	ShippingCents         int64             `bun:"shipping_cents"`
	AdditionalCostsCents  int64             `bun:"additional_costs_cents"`
	TotalCents            int64             `bun:"total_cents"`
	PaidCents             int64             `bun:"paid_cents"`
	PaymentPlan           PaymentPlan       `bun:"payment_plan,type:jsonb"`
	AccountID             *string           `bun:"account_id"`
	TrackInFinance        bool              `bun:"track_in_finance"`
	DecrementStock        bool              `bun:"decrement_stock"`
	SaleDate              apitime.Date      `bun:"sale_date,type:date"`
	EstimatedDeliveryDate *time.Time        `bun:"estimated_delivery_date"`
	Notes                 string            `bun:"notes"`
	ProductionStatus      *ProductionStatus `bun:"production_status"`
	ProductionNotes       string            `bun:"production_notes"`
	InvoiceLocked         bool              `bun:"invoice_locked"`
	CommissionPaidAt      *time.Time        `bun:"commission_paid_at"`
	CanceledAt            *time.Time        `bun:"canceled_at"`
	CancelReason          *string           `bun:"cancel_reason"`
	CreatedAt             time.Time         `bun:"created_at"`
	UpdatedAt             time.Time         `bun:"updated_at"`

	// The children as stored on the sale row (see the migration): every
	// write of the sale rewrites them from the decoded children below.
	ItemsDoc        doc `bun:"items_doc"`
	InstallmentsDoc doc `bun:"installments_doc"`
	PaymentsDoc     doc `bun:"payments_doc"`
	// CompanyTimezone is read with the sale for writes (Load ForUpdate).
	CompanyTimezone string `bun:"company_timezone,scanonly"`

	Items        []ItemRow                `bun:"-"`
	Installments []InstallmentRow         `bun:"-"`
	Payments     []PaymentRow             `bun:"-"`
	Transactions []finance.TransactionRow `bun:"-"`
}

// doc is a JSON document column kept as its bytes: reading a sale decodes
// it once, into the children, instead of validating it on the way.
type doc []byte

// Scan copies the column's text.
func (d *doc) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		*d = append((*d)[:0], v...)
	case string:
		*d = append((*d)[:0], v...)
	case nil:
		*d = nil
	default:
		return fmt.Errorf("sales: cannot scan %T into a document", src)
	}
	return nil
}

// Value writes the document as text (PostgreSQL casts it to jsonb).
func (d doc) Value() (driver.Value, error) {
	if d == nil {
		return "[]", nil
	}
	return string(d), nil
}

// PaymentPlan is the payment plan: always all six fields (2.6).
type PaymentPlan struct {
	Mode             PaymentPlanMode          `json:"mode"`
	PaymentMethod    *PaymentMethod           `json:"payment_method"`
	AccountID        *string                  `json:"account_id"`
	PaidAt           *apitime.Date            `json:"paid_at"`
	EntryAmountCents *int64                   `json:"entry_amount_cents"`
	Installments     []PaymentPlanInstallment `json:"installments" api:"nullable" doc:"null in paid_full."`
}

// PaymentPlanInstallment is an installment of the plan as agreed.
type PaymentPlanInstallment struct {
	AmountCents int64        `json:"amount_cents"`
	DueDate     apitime.Date `json:"due_date"`
}

// ItemRow is a sale line of one version. The json tags name the columns: Load
// reads items as JSON aggregated by PostgreSQL.
type ItemRow struct {
	bun.BaseModel `bun:"table:sale_items,alias:i"`

	ID                 string       `bun:"id,pk" json:"id"`
	CompanyID          string       `bun:"company_id" json:"company_id"`
	SaleID             string       `bun:"sale_id" json:"sale_id"`
	Version            int          `bun:"version" json:"version"`
	Position           int          `bun:"position" json:"position"`
	Type               SaleItemType `bun:"type" json:"type"`
	Name               string       `bun:"name" json:"name"`
	Quantity           int64        `bun:"quantity" json:"quantity"`
	UnitPriceCents     int64        `bun:"unit_price_cents" json:"unit_price_cents"`
	OriginalPriceCents int64        `bun:"original_price_cents" json:"original_price_cents"`
	TotalPriceCents    int64        `bun:"total_price_cents" json:"total_price_cents"`
	ProductID          *string      `bun:"product_id" json:"product_id"`
	VariationID        *string      `bun:"variation_id" json:"variation_id"`
}

// InstallmentRow is a stored installment (json tags as for Item).
type InstallmentRow struct {
	bun.BaseModel `bun:"table:sale_installments,alias:n"`

	ID          string            `bun:"id,pk" json:"id"`
	CompanyID   string            `bun:"company_id" json:"company_id"`
	SaleID      string            `bun:"sale_id" json:"sale_id"`
	Kind        InstallmentKind   `bun:"kind" json:"kind"`
	AmountCents int64             `bun:"amount_cents" json:"amount_cents"`
	PaidCents   int64             `bun:"paid_cents" json:"paid_cents"`
	DueDate     apitime.Date      `bun:"due_date,type:date" json:"due_date"`
	PaidDate    *apitime.Date     `bun:"paid_date,type:date" json:"paid_date"`
	Status      InstallmentStatus `bun:"status" json:"status"`
	CreatedAt   time.Time         `bun:"created_at" json:"created_at"`
	UpdatedAt   time.Time         `bun:"updated_at" json:"updated_at"`
}

// Remaining is what is still to receive on the installment.
func (n *InstallmentRow) Remaining() int64 { return n.AmountCents - n.PaidCents }

// PaymentRow is a stored payment (json tags as for Item).
type PaymentRow struct {
	bun.BaseModel `bun:"table:sale_payments,alias:y"`

	ID               string         `bun:"id,pk" json:"id"`
	CompanyID        string         `bun:"company_id" json:"company_id"`
	SaleID           string         `bun:"sale_id" json:"sale_id"`
	AmountCents      int64          `bun:"amount_cents" json:"amount_cents"`
	PaidAt           apitime.Date   `bun:"paid_at,type:date" json:"paid_at"`
	PaymentMethod    *PaymentMethod `bun:"payment_method" json:"payment_method"`
	AccountID        *string        `bun:"account_id" json:"account_id"`
	ReceiptNumber    *string        `bun:"receipt_number" json:"receipt_number"`
	HasActiveInvoice bool           `bun:"has_active_invoice" json:"has_active_invoice"`
	CanceledAt       *time.Time     `bun:"canceled_at" json:"canceled_at"`
	CancelReason     *string        `bun:"cancel_reason" json:"cancel_reason"`
	CreatedAt        time.Time      `bun:"created_at" json:"created_at"`
	UpdatedAt        time.Time      `bun:"updated_at" json:"updated_at"`

	// Allocations is how the payment was applied (json: allocations).
	Allocations []AllocationRow `bun:"-" json:"allocations"`
}

// Active reports a payment not reversed.
func (p *PaymentRow) Active() bool { return p.CanceledAt == nil }

// AllocationRow is the part of a payment applied to one installment.
type AllocationRow struct {
	bun.BaseModel `bun:"table:sale_payment_allocations,alias:a"`

	CompanyID     string `bun:"company_id" json:"-"`
	PaymentID     string `bun:"payment_id,pk" json:"payment_id"`
	InstallmentID string `bun:"installment_id,pk" json:"installment_id"`
	AmountCents   int64  `bun:"amount_cents" json:"amount_cents"`
}

// Env is who writes and where: the write (company, actor, time) and the
// company's time zone, which decides what "today" and "overdue" mean.
type Env struct {
	Write    *streams.Write
	Location *time.Location
}

// Today is the current date in the company's time zone.
func (e Env) Today() apitime.Date {
	loc := e.Location
	if loc == nil {
		loc = time.UTC
	}
	t := e.Write.At.In(loc)
	return apitime.Date{Time: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)}
}

// NewEnv builds an Env from a write and an IANA zone name (UTC when the
// name is unknown).
func NewEnv(w *streams.Write, timezone string) Env {
	if loc, ok := zones.Load(timezone); ok {
		return Env{Write: w, Location: loc.(*time.Location)}
	}
	loc, err := time.LoadLocation(timezone)
	if err != nil {
		loc = time.UTC
	}
	zones.Store(timezone, loc)
	return Env{Write: w, Location: loc}
}

// zones caches loaded time zones: time.LoadLocation reads the zone database
// on every call, and every sale write needs its company's zone.
var zones sync.Map

// The closed sets of a sale as named types: the OpenAPI document lists
// their values (enums), and requests decode into them.
type (
	// PaymentPlanMode is payment_plan.mode (2.6); quotes propose plans too,
	// so it is declared in finance, below both.
	PaymentPlanMode = finance.PaymentPlanMode
	// PaymentMethod is a payment_method (2.6).
	PaymentMethod = finance.PaymentMethod
	// PaymentStatus is a sale's payment_status (3.2).
	PaymentStatus string
	// SaleItemType is an item's type: custom or catalog.
	SaleItemType string
	// InstallmentKind is what an installment is for.
	InstallmentKind string
	// InstallmentStatus is an installment's state.
	InstallmentStatus string
	// ProductionStatus is a sale's production_status.
	ProductionStatus string
)

// Values of each closed set.
func (PaymentStatus) Values() []string    { return []string{StatusPending, StatusPartial, StatusPaid} }
func (SaleItemType) Values() []string     { return []string{ItemCustom, ItemCatalog} }
func (InstallmentKind) Values() []string  { return []string{KindUpfront, KindEntry, KindInstallment} }
func (ProductionStatus) Values() []string { return strs(ProductionStatuses) }
func (InstallmentStatus) Values() []string {
	return []string{InstOpen, InstOverdue, InstPaid, InstCanceled}
}

func strs[S ~string](vs []S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
