package orders

import (
	"context"
	"fmt"
	"slices"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/appointments"
	"oficina/schema/ids"
	"oficina/schema/notify"
	"oficina/streams"
)

// NumberSequence is the numbering sequence of service orders.
const NumberSequence = "service_order"

// NotificationTemplate is the messaging template sent to technicians.
const NotificationTemplate = "service_order.assigned"

// Create is POST /service_orders, exactly as the dashboard creates an order:
// validation, the company's required fields and type rule, references of
// the company (404), the monthly quota (403 plan_limit_reached), the next
// order number, the automatic checklists, and — when asked — the calendar
// appointment and the technicians' notifications. The caller checks the
// extra permission of CreateAppointment (NeedsAppointment) before.
func Create(ctx context.Context, w *streams.Write, in ServiceOrderCreate) (*Row, error) {
	d, err := in.draft()
	if err != nil {
		return nil, err
	}
	return create(ctx, w, d)
}

// missing reports whether a requirable field is empty in d.
func (d *draft) missing(name string) bool {
	switch name {
	case "client_id":
		return d.clientID == nil
	case "client_phone":
		return d.clientPhone == ""
	case "client_description":
		return d.clientDescription == ""
	case "service_address":
		return d.serviceAddress == ""
	case "type_id":
		return d.typeID == nil
	case "technician_id":
		return d.technicianID == nil
	case "support_technician_ids":
		return len(d.support) == 0
	case "scheduled_start":
		return d.scheduledStart == nil
	case "scheduled_end":
		return d.scheduledEnd == nil
	case "internal_notes":
		return d.internalNotes == ""
	case "items":
		return len(d.items) == 0
	}
	return false
}

// requiredByCompany lists every field the company requires that d lacks.
func requiredByCompany(c *companyContext, d *draft) error {
	var f apierr.Fields
	if c.TypeRequired && d.typeID == nil {
		f.Add("type_id", apierr.Required)
	}
	for _, name := range c.RequiredFields {
		if d.missing(name) && !has(f, name) {
			f.Add(name, apierr.Required)
		}
	}
	return f.Err()
}

func create(ctx context.Context, w *streams.Write, d *draft) (*Row, error) {
	techs := d.support
	if d.technicianID != nil {
		techs = append([]string{*d.technicianID}, d.support...)
	}
	// Only ids of the right shape reach the query (a NUL would be a
	// database error); the others fail the checks below as unknown ids.
	typeID := d.typeID
	if typeID != nil && !ids.Valid("sot", *typeID) {
		typeID = nil
	}
	c, err := loadCreationContext(ctx, w.Tx, w.CompanyID, typeID, slices.DeleteFunc(slices.Clone(techs),
		func(id string) bool { return !ids.Valid("mem", id) }))
	if err != nil {
		return nil, err
	}
	if err := requiredByCompany(c, d); err != nil {
		return nil, err
	}
	if err := checkClient(ctx, w.Tx, d.clientID); err != nil {
		return nil, err
	}
	if err := checkType(ctx, w.Tx, d.typeID); err != nil {
		return nil, err
	}
	// Every technician must be an active technician of the company: one of
	// another company, of another type or unknown is 404 alike.
	if c.Technicians != int64(len(techs)) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	checklist := c.checklistItems()
	// The quota and number rows stay locked until commit: take them last,
	// right before the events (two statements, then the order row with the
	// commit).
	n, err := takeNumber(ctx, w.Tx, w.CompanyID, c, w.At)
	if err != nil {
		return nil, err
	}
	o := d.order(w, n, checklist)
	if d.createAppointment && d.scheduledStart != nil {
		if err := addAppointment(ctx, w, o); err != nil {
			return nil, err
		}
	}
	// Nothing in the write reads the row back (the links to it are
	// deferred foreign keys), so it travels with COMMIT.
	if err := w.Later(ctx, w.Tx.NewInsert().Model(o)); err != nil {
		return nil, fmt.Errorf("orders: create: %w", err)
	}
	if d.sendToTechnician {
		if err := notifyTechnicians(ctx, w, o); err != nil {
			return nil, err
		}
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventCreated, Object: o.View()}); err != nil {
		return nil, err
	}
	return o, nil
}

func (d *draft) order(w *streams.Write, number int64, checklist []ServiceOrderChecklistItem) *Row {
	o := &Row{
		ID: ids.New(IDPrefix), CompanyID: w.CompanyID, Number: number, Status: StatusPending,
		ClientID: d.clientID, ClientName: d.clientName, ClientPhone: d.clientPhone,
		ClientDescription: d.clientDescription, ServiceAddress: d.serviceAddress, TypeID: d.typeID,
		TechnicianID: d.technicianID, SupportTechnicianIDs: nonNil(d.support),
		ScheduledStart: d.scheduledStart, ScheduledEnd: d.scheduledEnd, Priority: d.priority,
		InternalNotes: d.internalNotes, Items: nonNil(d.items), SubtotalCents: subtotal(d.items),
		DiscountCents: d.discountCents, AdditionalCostsCents: d.additionalCostsCents,
		Checklist: checklist, TechnicianCompletions: []TechnicianCompletion{}, QuoteID: d.quoteID,
		CreatedAt: w.At, UpdatedAt: w.At,
	}
	o.TotalCents = o.SubtotalCents - o.DiscountCents + o.AdditionalCostsCents
	if d.scheduledStart != nil {
		o.Status = StatusScheduled
	}
	return o
}

// addAppointment creates the order's calendar appointment (mirrored to the
// connected calendars of its technicians and of the member who created it)
// and links it to the order, which is inserted right after.
func addAppointment(ctx context.Context, w *streams.Write, o *Row) error {
	var by *string
	if w.Actor.MemberID != "" {
		by = &w.Actor.MemberID
	}
	a, _, err := appointments.Create(ctx, w.Tx, w.CompanyID, appointments.AppointmentCreate{
		Title:    fmt.Sprintf("OS #%d - %s", o.Number, o.ClientName),
		StartsAt: *o.ScheduledStart, EndsAt: o.ScheduledEnd, ServiceOrderID: &o.ID, ClientID: o.ClientID,
		MemberIDs: o.technicians(), CreatedBy: by,
	}, w.At)
	if err != nil {
		return err
	}
	o.AppointmentID = &a.ID
	return nil
}

// assignment is the payload of the technicians' message.
type assignment struct {
	ServiceOrderID string        `json:"service_order_id"`
	Number         int64         `json:"number"`
	Role           string        `json:"role"` // in_charge or support
	ClientName     string        `json:"client_name"`
	ServiceAddress string        `json:"service_address"`
	ScheduledStart *apitime.Time `json:"scheduled_start"`
	Priority       string        `json:"priority"`
}

// notifyTechnicians queues one message to the technician in charge and one
// to each support technician; with no technician in charge, nobody.
func notifyTechnicians(ctx context.Context, w *streams.Write, o *Row) error {
	if o.TechnicianID == nil {
		return nil
	}
	msg := func(member, role string) notify.Message {
		return notify.Message{RecipientMemberID: member, Template: NotificationTemplate, SubjectType: "service_order",
			SubjectID: o.ID, Payload: assignment{ServiceOrderID: o.ID, Number: o.Number, Role: role,
				ClientName: o.ClientName, ServiceAddress: o.ServiceAddress, ScheduledStart: at(o.ScheduledStart),
				Priority: o.Priority}}
	}
	msgs := []notify.Message{msg(*o.TechnicianID, "in_charge")}
	for _, id := range o.SupportTechnicianIDs {
		msgs = append(msgs, msg(id, "support"))
	}
	_, err := notify.Enqueue(ctx, w.Tx, w.CompanyID, w.At, msgs...)
	return err
}
