package sales

import (
	"context"
	"slices"
	"strings"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/field"
	"oficina/schema/products"
	"oficina/streams"
)

// SaleUpdate is the body of PATCH /sales/{id}: notes and production, which
// change without a new version. Omitted fields stay; null clears.
type SaleUpdate struct {
	Notes                 field.Opt[string]           `json:"notes" maxLength:"10000"`
	ProductionStatus      field.Opt[ProductionStatus] `json:"production_status" api:"nullable"`
	ProductionNotes       field.Opt[string]           `json:"production_notes" maxLength:"10000"`
	EstimatedDeliveryDate field.Opt[apitime.Time]     `json:"estimated_delivery_date" api:"nullable"`
}

// Update applies a SalePatch and records sale.updated when something changed.
func Update(ctx context.Context, w *streams.Write, saleID string, p SaleUpdate) (*Row, error) {
	var f apierr.Fields
	if p.Notes.Set {
		checkText(&f, "notes", p.Notes.Value, MaxText)
	}
	if p.ProductionNotes.Set {
		checkText(&f, "production_notes", p.ProductionNotes.Value, MaxText)
	}
	if p.ProductionStatus.Set && !p.ProductionStatus.Null && !slices.Contains(ProductionStatuses, p.ProductionStatus.Value) {
		f.Add("production_status", apierr.InvalidValue)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	o, err := beginWritable(ctx, w, saleID)
	if err != nil {
		return nil, err
	}
	if p.Notes.Set {
		o.s.Notes = p.Notes.Value
	}
	if p.ProductionNotes.Set {
		o.s.ProductionNotes = p.ProductionNotes.Value
	}
	if p.ProductionStatus.Set {
		o.s.ProductionStatus = p.ProductionStatus.Ptr()
	}
	if p.EstimatedDeliveryDate.Set {
		o.s.EstimatedDeliveryDate = nil
		if v := p.EstimatedDeliveryDate.Ptr(); v != nil {
			t := v.Time
			o.s.EstimatedDeliveryDate = &t
		}
	}
	// o.before is a copy of the sale, so its snapshot may be taken now.
	before, err := streams.Snap(o.before.View(false))
	if err != nil {
		return nil, err
	}
	fields, err := before.Changed(o.s.View(false))
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return o.s, nil // nothing changed: no write, no event (6.3 rule 3)
	}
	return o.commit()
}

// Cancel cancels a sale: every payment is reversed, the installments are
// canceled, the stock it deducted comes back and its finance transactions
// are canceled; canceled_at is set. It records sale.updated, one
// sale.payment_canceled per payment it reversed, sale.canceled, and the
// finance and stock events. A sale with an active invoice (409) or already
// canceled (409) is refused. A sale is never deleted.
func Cancel(ctx context.Context, w *streams.Write, saleID string, in Cancellation) (*Row, error) {
	o, err := beginCancellation(ctx, w, saleID, in)
	if err != nil {
		return nil, err
	}
	if o.s.InvoiceLocked {
		return nil, apierr.New(apierr.Conflict)
	}
	reason := strings.TrimSpace(in.Reason)
	for i := range o.s.Payments {
		if y := &o.s.Payments[i]; y.Active() {
			reverse(o.s, y, reason, o.env)
			o.events = append(o.events, EventPaymentCanceled)
		}
	}
	settle(o.s, o.env.Today())
	for i := range o.s.Installments {
		o.s.Installments[i].Status = InstCanceled
	}
	at := w.At
	o.s.CanceledAt, o.s.CancelReason, o.s.Overdue = &at, &reason, false
	o.stock = products.ReasonSaleCanceled
	o.events = append(o.events, EventCanceled)
	return o.commit()
}
