package orders

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apitime"
	"oficina/schema/db"
)

// Statuses of an order (3.1). Start moves an order to in_progress.
const (
	StatusPending    = "pending"
	StatusScheduled  = "scheduled"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusCanceled   = "canceled"
)

// Statuses lists every status.
var Statuses = []string{StatusPending, StatusScheduled, StatusInProgress, StatusCompleted, StatusCanceled}

// ServiceOrderStatus is an order's status in the API (an enum of Statuses).
type ServiceOrderStatus string

// Values are the statuses.
func (ServiceOrderStatus) Values() []string { return Statuses }

// ServiceOrderPriority is an order's priority in the API (an enum of
// Priorities).
type ServiceOrderPriority string

// Values are the priorities.
func (ServiceOrderPriority) Values() []string { return Priorities }

// Priorities lists the priority values; DefaultPriority is used when none
// is sent.
var Priorities = []string{"low", "medium", "high", "urgent"}

// DefaultPriority of a new order.
const DefaultPriority = "medium"

// IDPrefix of service order ids.
const IDPrefix = "so"

// ServiceOrderItem is an order line; total_cents is stored as sent, never recalculated.
type ServiceOrderItem struct {
	Description    string  `json:"description"`
	Quantity       float64 `json:"quantity"`
	UnitPriceCents int64   `json:"unit_price_cents"`
	TotalCents     int64   `json:"total_cents"`
}

// ServiceOrderChecklistItem is an item of an automatic checklist applied to the order.
type ServiceOrderChecklistItem struct {
	ID          string        `json:"id"`
	ChecklistID string        `json:"checklist_id"`
	Description string        `json:"description"`
	Required    bool          `json:"required"`
	Done        bool          `json:"done"`
	DoneAt      *apitime.Time `json:"done_at"`
}

// TechnicianCompletion is a technician's "my part is done" mark.
type TechnicianCompletion struct {
	TechnicianID string       `json:"technician_id"`
	CompletedAt  apitime.Time `json:"completed_at"`
}

// Row is a stored service order.
type Row struct {
	bun.BaseModel `bun:"table:service_orders"`

	ID                    string                      `bun:"id,pk"`
	CompanyID             string                      `bun:"company_id"`
	Number                int64                       `bun:"number"`
	Status                string                      `bun:"status"`
	ClientID              *string                     `bun:"client_id"`
	ClientName            string                      `bun:"client_name"`
	ClientPhone           string                      `bun:"client_phone"`
	ClientDescription     string                      `bun:"client_description"`
	ServiceAddress        string                      `bun:"service_address"`
	TypeID                *string                     `bun:"type_id"`
	TechnicianID          *string                     `bun:"technician_id"`
	SupportTechnicianIDs  []string                    `bun:"support_technician_ids,array"`
	ScheduledStart        *time.Time                  `bun:"scheduled_start"`
	ScheduledEnd          *time.Time                  `bun:"scheduled_end"`
	StartedAt             *time.Time                  `bun:"started_at"`
	CompletedAt           *time.Time                  `bun:"completed_at"`
	CanceledAt            *time.Time                  `bun:"canceled_at"`
	Priority              string                      `bun:"priority"`
	InternalNotes         string                      `bun:"internal_notes"`
	Items                 []ServiceOrderItem          `bun:"items,type:jsonb"`
	SubtotalCents         int64                       `bun:"subtotal_cents"`
	DiscountCents         int64                       `bun:"discount_cents"`
	AdditionalCostsCents  int64                       `bun:"additional_costs_cents"`
	TotalCents            int64                       `bun:"total_cents"`
	Checklist             []ServiceOrderChecklistItem `bun:"checklist,type:jsonb"`
	TechnicianCompletions []TechnicianCompletion      `bun:"technician_completions,type:jsonb"`
	AppointmentID         *string                     `bun:"appointment_id"`
	QuoteID               *string                     `bun:"quote_id"`
	CreatedAt             time.Time                   `bun:"created_at"`
	UpdatedAt             time.Time                   `bun:"updated_at"`
}

// ServiceOrder is an order as GET /service_orders/{id} returns it; events carry
// exactly this.
type ServiceOrder struct {
	Object                string                      `json:"object" const:"service_order"`
	ID                    string                      `json:"id"`
	Number                int64                       `json:"number"`
	Status                ServiceOrderStatus          `json:"status"`
	ClientID              *string                     `json:"client_id"`
	ClientName            string                      `json:"client_name"`
	ClientPhone           string                      `json:"client_phone"`
	ClientDescription     string                      `json:"client_description"`
	ServiceAddress        string                      `json:"service_address"`
	TypeID                *string                     `json:"type_id"`
	TechnicianID          *string                     `json:"technician_id"`
	SupportTechnicianIDs  []string                    `json:"support_technician_ids"`
	ScheduledStart        *apitime.Time               `json:"scheduled_start"`
	ScheduledEnd          *apitime.Time               `json:"scheduled_end"`
	StartedAt             *apitime.Time               `json:"started_at"`
	CompletedAt           *apitime.Time               `json:"completed_at"`
	CanceledAt            *apitime.Time               `json:"canceled_at"`
	Priority              ServiceOrderPriority        `json:"priority"`
	InternalNotes         string                      `json:"internal_notes"`
	Items                 []ServiceOrderItem          `json:"items"`
	SubtotalCents         int64                       `json:"subtotal_cents"`
	DiscountCents         int64                       `json:"discount_cents"`
	AdditionalCostsCents  int64                       `json:"additional_costs_cents"`
	TotalCents            int64                       `json:"total_cents"`
	Checklist             []ServiceOrderChecklistItem `json:"checklist"`
	TechnicianCompletions []TechnicianCompletion      `json:"technician_completions"`
	AppointmentID         *string                     `json:"appointment_id"`
	QuoteID               *string                     `json:"quote_id"`
	CreatedAt             apitime.Time                `json:"created_at"`
	UpdatedAt             apitime.Time                `json:"updated_at"`
}

// View renders the GET representation.
func (o *Row) View() ServiceOrder {
	return ServiceOrder{
		Object: "service_order", ID: o.ID, Number: o.Number, Status: ServiceOrderStatus(o.Status),
		ClientID: o.ClientID, ClientName: o.ClientName, ClientPhone: o.ClientPhone,
		ClientDescription: o.ClientDescription, ServiceAddress: o.ServiceAddress, TypeID: o.TypeID,
		TechnicianID: o.TechnicianID, SupportTechnicianIDs: nonNil(o.SupportTechnicianIDs),
		ScheduledStart: at(o.ScheduledStart), ScheduledEnd: at(o.ScheduledEnd), StartedAt: at(o.StartedAt),
		CompletedAt: at(o.CompletedAt), CanceledAt: at(o.CanceledAt), Priority: ServiceOrderPriority(o.Priority),
		InternalNotes: o.InternalNotes, Items: nonNil(o.Items), SubtotalCents: o.SubtotalCents,
		DiscountCents: o.DiscountCents, AdditionalCostsCents: o.AdditionalCostsCents, TotalCents: o.TotalCents,
		Checklist: nonNil(o.Checklist), TechnicianCompletions: nonNil(o.TechnicianCompletions),
		AppointmentID: o.AppointmentID, QuoteID: o.QuoteID,
		CreatedAt: apitime.At(o.CreatedAt), UpdatedAt: apitime.At(o.UpdatedAt),
	}
}

// Closed reports a completed or canceled order: edits, start, complete and
// cancel are refused (409); only POST /status reopens it.
func (o *Row) Closed() bool { return o.Status == StatusCompleted || o.Status == StatusCanceled }

// technicians returns the technician in charge (when set) followed by the
// support team.
func (o *Row) technicians() []string {
	var out []string
	if o.TechnicianID != nil {
		out = append(out, *o.TechnicianID)
	}
	return append(out, o.SupportTechnicianIDs...)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func at(t *time.Time) *apitime.Time {
	if t == nil {
		return nil
	}
	v := apitime.At(*t)
	return &v
}

// Get reads an order of the transaction's company; another company's id or a
// malformed one is 404 resource_not_found.
func Get(ctx context.Context, tx bun.IDB, id string) (*Row, error) {
	return get(ctx, tx, id, false)
}

func get(ctx context.Context, tx bun.IDB, id string, forUpdate bool) (*Row, error) {
	return db.ByID[Row](ctx, tx, IDPrefix, id, forUpdate)
}

// save writes every mutable column of o.
func save(ctx context.Context, tx bun.IDB, o *Row) error {
	if _, err := tx.NewUpdate().Model(o).ExcludeColumn("id", "company_id", "number", "created_at").WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("orders: save: %w", err)
	}
	return nil
}
