package orders

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
)

// Limits of the order's fields (docs/api.md, "Service orders").
const (
	MaxNameLen     = 200
	MaxPhoneLen    = 40
	MaxAddressLen  = 500
	MaxTextLen     = 10000 // client_description, internal_notes
	MaxItemDescLen = 500
	MaxItems       = 200
	MaxSupport     = 20
	MaxCents       = 1_000_000_000_000 // per amount: 10 billion in the currency
	MaxQuantity    = 1_000_000
)

// MaxIDLen bounds an id sent in a body, in characters (as the OpenAPI
// document's maxLength counts).
const MaxIDLen = 64

// ServiceOrderItemInput is an item as sent; every field is required.
type ServiceOrderItemInput struct {
	Description    *string  `json:"description" api:"required" minLength:"1" maxLength:"500" pattern:"nonblank"`
	Quantity       *float64 `json:"quantity" api:"required" exclusiveMin:"0" max:"1000000"`
	UnitPriceCents *int64   `json:"unit_price_cents" api:"required" min:"0" max:"1000000000000"`
	TotalCents     *int64   `json:"total_cents" api:"required" min:"0" max:"1000000000000"`
}

// ServiceOrderCreate is the body of POST /service_orders.
type ServiceOrderCreate struct {
	ClientID             *string                 `json:"client_id" minLength:"1" maxLength:"64"`
	ClientName           *string                 `json:"client_name" api:"required" minLength:"1" maxLength:"200" pattern:"nonblank"`
	ClientPhone          *string                 `json:"client_phone" maxLength:"40"`
	ClientDescription    *string                 `json:"client_description" maxLength:"10000"`
	ServiceAddress       *string                 `json:"service_address" maxLength:"500"`
	TypeID               *string                 `json:"type_id" api:"nullable" minLength:"1" maxLength:"64"`
	TechnicianID         *string                 `json:"technician_id" minLength:"1" maxLength:"64"`
	SupportTechnicianIDs []string                `json:"support_technician_ids" maxItems:"20" uniqueItems:"true" minLength:"1" maxLength:"64"`
	ScheduledStart       *apitime.Time           `json:"scheduled_start"`
	ScheduledEnd         *apitime.Time           `json:"scheduled_end"`
	Priority             *ServiceOrderPriority   `json:"priority"`
	InternalNotes        *string                 `json:"internal_notes" maxLength:"10000"`
	Items                []ServiceOrderItemInput `json:"items" maxItems:"200"`
	DiscountCents        *int64                  `json:"discount_cents" min:"0" max:"1000000000000"`
	AdditionalCostsCents *int64                  `json:"additional_costs_cents" min:"0" max:"1000000000000"`
	// SendToTechnician notifies the technician in charge and the support
	// team after creation (nobody without technician_id).
	SendToTechnician bool `json:"send_to_technician"`
	// CreateAppointment, with scheduled_start, creates a calendar
	// appointment and needs appointments:create.
	CreateAppointment bool `json:"create_appointment"`
}

// NeedsAppointment reports whether the request creates an appointment, and
// so needs appointments:create (5.4); without scheduled_start it does not.
func (in *ServiceOrderCreate) NeedsAppointment() bool {
	return in.CreateAppointment && in.ScheduledStart != nil
}

// Validate checks what needs no database: required client_name, lengths,
// enumerations, amounts and item shapes. Errors are 422 validation_failed
// listing every field.
func (in *ServiceOrderCreate) Validate() error {
	_, err := in.draft()
	return err
}

// draft is a new order's fields after validation, before the database rules
// (references, type requirement, company settings).
type draft struct {
	clientID             *string
	clientName           string
	clientPhone          string
	clientDescription    string
	serviceAddress       string
	typeID               *string
	technicianID         *string
	support              []string
	scheduledStart       *time.Time
	scheduledEnd         *time.Time
	priority             string
	internalNotes        string
	items                []ServiceOrderItem
	discountCents        int64
	additionalCostsCents int64
	sendToTechnician     bool
	createAppointment    bool
	quoteID              *string
}

func (in *ServiceOrderCreate) draft() (*draft, error) {
	var f apierr.Fields
	d := &draft{sendToTechnician: in.SendToTechnician, createAppointment: in.CreateAppointment}
	d.clientName = text(&f, "client_name", in.ClientName, MaxNameLen, true)
	if d.clientName == "" && !has(f, "client_name") {
		f.Add("client_name", apierr.Required)
	}
	d.clientID = ref(&f, "client_id", in.ClientID)
	d.typeID = ref(&f, "type_id", in.TypeID)
	d.technicianID = ref(&f, "technician_id", in.TechnicianID)
	d.support = supportIDs(&f, in.SupportTechnicianIDs, d.technicianID)
	d.clientPhone = text(&f, "client_phone", in.ClientPhone, MaxPhoneLen, true)
	d.clientDescription = text(&f, "client_description", in.ClientDescription, MaxTextLen, false)
	d.serviceAddress = text(&f, "service_address", in.ServiceAddress, MaxAddressLen, true)
	d.internalNotes = text(&f, "internal_notes", in.InternalNotes, MaxTextLen, false)
	d.priority = priority(&f, (*string)(in.Priority))
	d.scheduledStart, d.scheduledEnd = schedule(&f, in.ScheduledStart, in.ScheduledEnd)
	d.items = items(&f, in.Items)
	d.discountCents = cents(&f, "discount_cents", in.DiscountCents)
	d.additionalCostsCents = cents(&f, "additional_costs_cents", in.AdditionalCostsCents)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := checkTotal(d.items, d.discountCents, d.additionalCostsCents); err != nil {
		return nil, err
	}
	return d, nil
}

// text validates an optional string: no NUL (PostgreSQL text refuses it),
// at most max characters; single-line fields are trimmed.
func text(f *apierr.Fields, param string, s *string, max int, trim bool) string {
	if s == nil {
		return ""
	}
	v := *s
	if trim {
		v = strings.TrimSpace(v)
	}
	switch {
	case strings.ContainsRune(v, 0) || !utf8.ValidString(v):
		f.Add(param, apierr.InvalidValue)
	case utf8.RuneCountInString(v) > max:
		f.Add(param, apierr.TooLong)
	}
	return v
}

// has reports whether param already has an error.
func has(f apierr.Fields, param string) bool {
	for _, e := range f {
		if e.Param == param {
			return true
		}
	}
	return false
}

// ref validates an optional id: its existence is checked later (404).
func ref(f *apierr.Fields, param string, s *string) *string {
	if s == nil {
		return nil
	}
	if *s == "" || utf8.RuneCountInString(*s) > MaxIDLen {
		f.Add(param, apierr.InvalidValue)
		return nil
	}
	v := *s
	return &v
}

func supportIDs(f *apierr.Fields, in []string, lead *string) []string {
	if len(in) > MaxSupport {
		f.Add("support_technician_ids", apierr.OutOfRange)
		return nil
	}
	out := make([]string, 0, len(in))
	for i, id := range in {
		param := fmt.Sprintf("support_technician_ids[%d]", i)
		switch {
		case id == "" || utf8.RuneCountInString(id) > MaxIDLen:
			f.Add(param, apierr.InvalidValue)
		case slices.Contains(out, id) || (lead != nil && *lead == id):
			// Listed twice, or also the technician in charge.
			f.Add(param, apierr.InvalidValue)
		default:
			out = append(out, id)
		}
	}
	return out
}

func priority(f *apierr.Fields, p *string) string {
	if p == nil {
		return DefaultPriority
	}
	if !slices.Contains(Priorities, *p) {
		f.Add("priority", apierr.InvalidValue)
	}
	return *p
}

func timePtr(t *apitime.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Time
	return &v
}

func schedule(f *apierr.Fields, start, end *apitime.Time) (*time.Time, *time.Time) {
	s, e := timePtr(start), timePtr(end)
	if s != nil && e != nil && e.Before(*s) {
		f.Add("scheduled_end", apierr.OutOfRange)
	}
	return s, e
}

func items(f *apierr.Fields, in []ServiceOrderItemInput) []ServiceOrderItem {
	if len(in) > MaxItems {
		f.Add("items", apierr.OutOfRange)
		return nil
	}
	out := make([]ServiceOrderItem, len(in))
	for i, it := range in {
		p := fmt.Sprintf("items[%d].", i)
		out[i].Description = text(f, p+"description", it.Description, MaxItemDescLen, true)
		if out[i].Description == "" && !has(*f, p+"description") {
			f.Add(p+"description", apierr.Required)
		}
		switch {
		case it.Quantity == nil:
			f.Add(p+"quantity", apierr.Required)
		case !(*it.Quantity > 0 && *it.Quantity <= MaxQuantity):
			f.Add(p+"quantity", apierr.OutOfRange)
		default:
			out[i].Quantity = *it.Quantity
		}
		out[i].UnitPriceCents = requiredCents(f, p+"unit_price_cents", it.UnitPriceCents)
		out[i].TotalCents = requiredCents(f, p+"total_cents", it.TotalCents)
	}
	return out
}

func requiredCents(f *apierr.Fields, param string, v *int64) int64 {
	if v == nil {
		f.Add(param, apierr.Required)
		return 0
	}
	return cents(f, param, v)
}

func cents(f *apierr.Fields, param string, v *int64) int64 {
	if v == nil {
		return 0
	}
	if *v < 0 || *v > MaxCents {
		f.Add(param, apierr.OutOfRange)
		return 0
	}
	return *v
}

// subtotal sums the items' total_cents as sent.
func subtotal(items []ServiceOrderItem) int64 {
	var s int64
	for _, it := range items {
		s += it.TotalCents
	}
	return s
}

// checkTotal refuses a discount larger than subtotal plus additional costs:
// an order's total is never negative.
func checkTotal(items []ServiceOrderItem, discount, additional int64) error {
	if discount > subtotal(items)+additional {
		return apierr.Invalid("discount_cents", apierr.OutOfRange)
	}
	return nil
}
