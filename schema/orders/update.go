package orders

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/streams"
)

// ServiceOrderUpdate is the body of PATCH /service_orders/{id}: any field of the
// create body (not the switches) plus status. Omitted fields keep their
// value; null clears a nullable field, empties a text field or list, and is
// refused for client_name, priority and status.
type ServiceOrderUpdate struct {
	ClientID             *string                 `json:"client_id" api:"nullable" minLength:"1" maxLength:"64"`
	ClientName           *string                 `json:"client_name" minLength:"1" maxLength:"200" pattern:"nonblank"`
	ClientPhone          *string                 `json:"client_phone" maxLength:"40"`
	ClientDescription    *string                 `json:"client_description" maxLength:"10000"`
	ServiceAddress       *string                 `json:"service_address" maxLength:"500"`
	TypeID               *string                 `json:"type_id" api:"nullable" minLength:"1" maxLength:"64"`
	TechnicianID         *string                 `json:"technician_id" api:"nullable" minLength:"1" maxLength:"64"`
	SupportTechnicianIDs []string                `json:"support_technician_ids" maxItems:"20" uniqueItems:"true" minLength:"1" maxLength:"64"`
	ScheduledStart       *apitime.Time           `json:"scheduled_start" api:"nullable"`
	ScheduledEnd         *apitime.Time           `json:"scheduled_end" api:"nullable"`
	Priority             *ServiceOrderPriority   `json:"priority"`
	InternalNotes        *string                 `json:"internal_notes" maxLength:"10000"`
	Items                []ServiceOrderItemInput `json:"items" maxItems:"200"`
	DiscountCents        *int64                  `json:"discount_cents" min:"0" max:"1000000000000"`
	AdditionalCostsCents *int64                  `json:"additional_costs_cents" min:"0" max:"1000000000000"`
	Status               *ServiceOrderStatus     `json:"status"`

	present map[string]bool
}

// UnmarshalJSON decodes strictly (unknown fields refused at any depth) and
// remembers which keys the body carried, so null and omitted differ.
func (in *ServiceOrderUpdate) UnmarshalJSON(b []byte) error {
	type plain ServiceOrderUpdate
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode((*plain)(in)); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	in.present = make(map[string]bool, len(keys))
	for k := range keys {
		in.present[k] = true
	}
	return nil
}

// Has reports whether the body carried the field (null included).
func (in *ServiceOrderUpdate) Has(name string) bool { return in.present[name] }

// Update is PATCH: a completed or canceled order refuses (409). Changed
// references are checked like on creation (404), and the company's required
// fields apply to the fields the body touches.
func Update(ctx context.Context, w *streams.Write, id string, in ServiceOrderUpdate) (*Row, error) {
	var c *companyContext
	return mutate(ctx, w, id, func(o *Row) error {
		if o.Closed() {
			return apierr.New(apierr.Conflict)
		}
		var err error
		if c, err = loadContext(ctx, w.Tx, w.CompanyID); err != nil {
			return err
		}
		if err := in.apply(o, w); err != nil {
			return err
		}
		if err := in.required(c, o); err != nil {
			return err
		}
		return in.checkReferences(ctx, w.Tx, o)
	})
}

// apply validates the body against o and changes o.
func (in *ServiceOrderUpdate) apply(o *Row, w *streams.Write) error {
	var f apierr.Fields
	if in.Has("client_name") {
		o.ClientName = text(&f, "client_name", in.ClientName, MaxNameLen, true)
		if o.ClientName == "" && !has(f, "client_name") {
			f.Add("client_name", apierr.Required)
		}
	}
	if in.Has("client_id") {
		o.ClientID = ref(&f, "client_id", in.ClientID)
	}
	if in.Has("type_id") {
		o.TypeID = ref(&f, "type_id", in.TypeID)
	}
	if in.Has("technician_id") {
		o.TechnicianID = ref(&f, "technician_id", in.TechnicianID)
	}
	if in.Has("support_technician_ids") {
		o.SupportTechnicianIDs = supportIDs(&f, in.SupportTechnicianIDs, nil)
	}
	if o.TechnicianID != nil && slices.Contains(o.SupportTechnicianIDs, *o.TechnicianID) {
		f.Add(pick(in.Has("technician_id"), "technician_id", "support_technician_ids"), apierr.InvalidValue)
	}
	for _, t := range []struct {
		name string
		dst  *string
		src  *string
		max  int
		trim bool
	}{
		{"client_phone", &o.ClientPhone, in.ClientPhone, MaxPhoneLen, true},
		{"client_description", &o.ClientDescription, in.ClientDescription, MaxTextLen, false},
		{"service_address", &o.ServiceAddress, in.ServiceAddress, MaxAddressLen, true},
		{"internal_notes", &o.InternalNotes, in.InternalNotes, MaxTextLen, false},
	} {
		if in.Has(t.name) {
			*t.dst = text(&f, t.name, t.src, t.max, t.trim)
		}
	}
	if in.Has("priority") {
		if in.Priority == nil || !slices.Contains(Priorities, string(*in.Priority)) {
			f.Add("priority", apierr.InvalidValue)
		} else {
			o.Priority = string(*in.Priority)
		}
	}
	if in.Has("scheduled_start") {
		o.ScheduledStart = timePtr(in.ScheduledStart)
	}
	if in.Has("scheduled_end") {
		o.ScheduledEnd = timePtr(in.ScheduledEnd)
	}
	if o.ScheduledStart != nil && o.ScheduledEnd != nil && o.ScheduledEnd.Before(*o.ScheduledStart) {
		f.Add(pick(in.Has("scheduled_end"), "scheduled_end", "scheduled_start"), apierr.OutOfRange)
	}
	if in.Has("items") {
		o.Items = nonNil(items(&f, in.Items))
	}
	if in.Has("discount_cents") {
		o.DiscountCents = cents(&f, "discount_cents", in.DiscountCents)
	}
	if in.Has("additional_costs_cents") {
		o.AdditionalCostsCents = cents(&f, "additional_costs_cents", in.AdditionalCostsCents)
	}
	if in.Has("status") {
		if err := validStatus((*string)(in.Status)); err != nil {
			f.Add("status", apierr.As(err).Fields[0].Code)
		} else {
			o.setStatus(string(*in.Status), w.At)
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	if err := checkTotal(o.Items, o.DiscountCents, o.AdditionalCostsCents); err != nil {
		return err
	}
	o.SubtotalCents = subtotal(o.Items)
	o.TotalCents = o.SubtotalCents - o.DiscountCents + o.AdditionalCostsCents
	return nil
}

// required applies the type rule and the company's required fields to the
// fields the body touches (an order may predate a newly required field).
func (in *ServiceOrderUpdate) required(c *companyContext, o *Row) error {
	d := &draft{clientID: o.ClientID, clientPhone: o.ClientPhone, clientDescription: o.ClientDescription,
		serviceAddress: o.ServiceAddress, typeID: o.TypeID, technicianID: o.TechnicianID,
		support: o.SupportTechnicianIDs, scheduledStart: o.ScheduledStart, scheduledEnd: o.ScheduledEnd,
		internalNotes: o.InternalNotes, items: o.Items}
	var f apierr.Fields
	if c.TypeRequired && in.Has("type_id") && o.TypeID == nil {
		f.Add("type_id", apierr.Required)
	}
	for _, name := range c.RequiredFields {
		if in.Has(name) && d.missing(name) && !has(f, name) {
			f.Add(name, apierr.Required)
		}
	}
	return f.Err()
}

// checkReferences checks the references the body changed (404).
func (in *ServiceOrderUpdate) checkReferences(ctx context.Context, tx bun.IDB, o *Row) error {
	if in.Has("client_id") {
		if err := checkClient(ctx, tx, o.ClientID); err != nil {
			return err
		}
	}
	if in.Has("type_id") {
		if err := checkType(ctx, tx, o.TypeID); err != nil {
			return err
		}
	}
	var lead *string
	var support []string
	if in.Has("technician_id") {
		lead = o.TechnicianID
	}
	if in.Has("support_technician_ids") {
		support = o.SupportTechnicianIDs
	}
	return checkTechnicians(ctx, tx, lead, support)
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
