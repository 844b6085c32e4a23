package orders

import (
	"context"
	"fmt"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/quotes"
	"oficina/streams"
)

// ServiceOrderFromQuote is the body of POST /service_orders/from_quote. The client,
// items, discount and additional costs come from the quote; the rest is
// what the create body takes for the field work.
type ServiceOrderFromQuote struct {
	QuoteID              *string               `json:"quote_id" api:"required" minLength:"1"`
	ClientPhone          *string               `json:"client_phone" maxLength:"40"`
	ClientDescription    *string               `json:"client_description" maxLength:"10000"`
	ServiceAddress       *string               `json:"service_address" maxLength:"500"`
	TypeID               *string               `json:"type_id" api:"nullable" minLength:"1" maxLength:"64"`
	TechnicianID         *string               `json:"technician_id" minLength:"1" maxLength:"64"`
	SupportTechnicianIDs []string              `json:"support_technician_ids" maxItems:"20" uniqueItems:"true" minLength:"1" maxLength:"64"`
	ScheduledStart       *apitime.Time         `json:"scheduled_start"`
	ScheduledEnd         *apitime.Time         `json:"scheduled_end"`
	Priority             *ServiceOrderPriority `json:"priority"`
	InternalNotes        *string               `json:"internal_notes" maxLength:"10000"`
	SendToTechnician     bool                  `json:"send_to_technician"`
	CreateAppointment    bool                  `json:"create_appointment"`
}

// NeedsAppointment reports whether the conversion creates an appointment
// (and so needs appointments:create).
func (in *ServiceOrderFromQuote) NeedsAppointment() bool {
	return in.CreateAppointment && in.ScheduledStart != nil
}

// Validate checks the body without the database (422): quote_id and the
// field-work fields, with the rules of creation.
func (in *ServiceOrderFromQuote) Validate() error {
	if in.QuoteID == nil || *in.QuoteID == "" {
		return apierr.Invalid("quote_id", apierr.Required)
	}
	probe := in.create("-") // the quote gives the client's name
	_, err := probe.draft()
	return err
}

func (in *ServiceOrderFromQuote) create(clientName string) ServiceOrderCreate {
	return ServiceOrderCreate{ClientName: &clientName, ClientPhone: in.ClientPhone, ClientDescription: in.ClientDescription,
		ServiceAddress: in.ServiceAddress, TypeID: in.TypeID, TechnicianID: in.TechnicianID,
		SupportTechnicianIDs: in.SupportTechnicianIDs, ScheduledStart: in.ScheduledStart, ScheduledEnd: in.ScheduledEnd,
		Priority: in.Priority, InternalNotes: in.InternalNotes, SendToTechnician: in.SendToTechnician,
		CreateAppointment: in.CreateAppointment}
}

// FromQuote converts an approved quote into an order, once: the quote is
// locked, a quote that is not approved or already became an order is 409,
// and the new order goes through the whole creation path (numbering, quota,
// checklists, appointment, notifications, event).
func FromQuote(ctx context.Context, w *streams.Write, in ServiceOrderFromQuote) (*Row, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	q, err := quotes.Get(ctx, w.Tx, *in.QuoteID, true)
	if err != nil {
		return nil, err
	}
	if q.Status != quotes.StatusApproved || q.ConvertedOrderID != nil {
		return nil, apierr.New(apierr.Conflict)
	}
	ci := in.create(q.ClientName)
	d, err := ci.draft()
	if err != nil {
		return nil, err
	}
	d.clientID, d.quoteID = q.ClientID, &q.ID
	d.discountCents, d.additionalCostsCents = q.DiscountCents, q.AdditionalCostsCents
	d.items = make([]ServiceOrderItem, len(q.Items))
	for i, it := range q.Items {
		d.items[i] = ServiceOrderItem{Description: it.Description, Quantity: it.Quantity, UnitPriceCents: it.UnitPriceCents, TotalCents: it.TotalCents}
	}
	o, err := create(ctx, w, d)
	if err != nil {
		return nil, err
	}
	_, err = w.Tx.NewUpdate().Model((*quotes.Row)(nil)).Set("converted_order_id = ?", o.ID).Set("updated_at = ?", w.At).
		Where("id = ?", q.ID).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("orders: mark quote converted: %w", err)
	}
	return o, nil
}
