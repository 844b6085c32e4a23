package quotes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/clients"
	"oficina/schema/field"
	"oficina/schema/ids"
	"oficina/schema/numbering"
	"oficina/streams"
)

// Limits of a quote's text.
const (
	MaxClientName = 200
	MaxNotes      = 10000
)

// Statuses lists every status.
var Statuses = []string{StatusDraft, StatusSent, StatusApproved, StatusRejected, StatusCanceled, StatusExpired}

// QuoteCreate creates a quote (dashboard action).
type QuoteCreate struct {
	ClientID             *string         `json:"client_id" api:"nullable"`
	ClientName           string          `json:"client_name"`
	Items                []QuoteItem     `json:"items"`
	DiscountCents        int64           `json:"discount_cents"`
	AdditionalCostsCents int64           `json:"additional_costs_cents"`
	RecurringTotalCents  int64           `json:"recurring_total_cents"`
	PaymentPlan          json.RawMessage `json:"payment_plan" api:"nullable"`
	Notes                string          `json:"notes"`
	ValidUntil           *apitime.Time   `json:"valid_until" api:"nullable"`
	Status               string          `json:"status"`
}

// Create stores a quote with the company's next quote number as one write of
// w and records quote.created. A client of another company is 404.
func Create(ctx context.Context, w *streams.Write, in QuoteCreate) (*Row, error) {
	if in.Status == "" {
		in.Status = StatusDraft
	}
	q := &Row{ID: ids.New("quo"), CompanyID: w.CompanyID, ClientID: in.ClientID, ClientName: strings.TrimSpace(in.ClientName),
		Status: in.Status, Items: in.Items, DiscountCents: in.DiscountCents, AdditionalCostsCents: in.AdditionalCostsCents,
		RecurringTotalCents: in.RecurringTotalCents, PaymentPlan: in.PaymentPlan, Notes: in.Notes,
		CreatedAt: w.At, UpdatedAt: w.At}
	if in.ValidUntil != nil {
		t := in.ValidUntil.Time
		q.ValidUntil = &t
	}
	var f apierr.Fields
	if !slices.Contains(Statuses, q.Status) {
		f.Add("status", apierr.InvalidValue)
	}
	q.check(&f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := checkClient(ctx, w.Tx, q.ClientID); err != nil {
		return nil, err
	}
	n, err := numbering.Next(ctx, w.Tx, w.CompanyID, "quote")
	if err != nil {
		return nil, err
	}
	q.Number = n
	if q.Status == StatusApproved {
		q.ApprovedAt = &w.At
	}
	if q.Status == StatusRejected {
		q.RejectedAt = &w.At
	}
	if _, err := w.Tx.NewInsert().Model(q).Exec(ctx); err != nil {
		return nil, fmt.Errorf("quotes: create: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventCreated, Object: q.View()}); err != nil {
		return nil, err
	}
	return q, nil
}

// check validates the content and computes the totals: subtotal is the
// sum of the items' total_cents, total = subtotal − discount + additional
// costs (the recurring amount is never added).
func (q *Row) check(f *apierr.Fields) {
	switch n := utf8.RuneCountInString(q.ClientName); {
	case n == 0:
		f.Add("client_name", apierr.Required)
	case n > MaxClientName:
		f.Add("client_name", apierr.TooLong)
	}
	if utf8.RuneCountInString(q.Notes) > MaxNotes {
		f.Add("notes", apierr.TooLong)
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"discount_cents", q.DiscountCents}, {"additional_costs_cents", q.AdditionalCostsCents}, {"recurring_total_cents", q.RecurringTotalCents}} {
		if c.v < 0 {
			f.Add(c.name, apierr.OutOfRange)
		}
	}
	if q.Items == nil {
		q.Items = []QuoteItem{}
	}
	q.SubtotalCents = 0
	for i, it := range q.Items {
		if it.TotalCents < 0 || it.UnitPriceCents < 0 {
			f.Add(fmt.Sprintf("items[%d].total_cents", i), apierr.OutOfRange)
		}
		q.SubtotalCents += it.TotalCents
	}
	q.TotalCents = q.SubtotalCents - q.DiscountCents + q.AdditionalCostsCents
	checkPlan(q.PaymentPlan, f)
}

// checkClient verifies that a linked client belongs to the company (404
// otherwise).
func checkClient(ctx context.Context, tx bun.IDB, id *string) error {
	if id == nil {
		return nil
	}
	_, err := clients.Get(ctx, tx, *id)
	return err
}

// QuoteUpdate changes a quote's content (dashboard action): an omitted field
// stays, null clears client_id, payment_plan and valid_until (the members
// the quote shows as null, decision 16) and is 422 invalid_value on the
// others; notes are emptied with "". Status changes go through SetStatus.
type QuoteUpdate struct {
	ClientID             field.Opt[string]          `json:"client_id" api:"nullable"`
	ClientName           field.Opt[string]          `json:"client_name"`
	Items                field.Opt[[]QuoteItem]     `json:"items"`
	DiscountCents        field.Opt[int64]           `json:"discount_cents"`
	AdditionalCostsCents field.Opt[int64]           `json:"additional_costs_cents"`
	RecurringTotalCents  field.Opt[int64]           `json:"recurring_total_cents"`
	PaymentPlan          field.Opt[json.RawMessage] `json:"payment_plan" api:"nullable"`
	Notes                field.Opt[string]          `json:"notes"`
	ValidUntil           field.Opt[apitime.Time]    `json:"valid_until" api:"nullable"`
}

func (p *QuoteUpdate) apply(q *Row, f *apierr.Fields) {
	notNull := func(name string, set, null bool) {
		if set && null {
			f.Add(name, apierr.InvalidValue)
		}
	}
	notNull("client_name", p.ClientName.Set, p.ClientName.Null)
	notNull("items", p.Items.Set, p.Items.Null)
	notNull("discount_cents", p.DiscountCents.Set, p.DiscountCents.Null)
	notNull("additional_costs_cents", p.AdditionalCostsCents.Set, p.AdditionalCostsCents.Null)
	notNull("recurring_total_cents", p.RecurringTotalCents.Set, p.RecurringTotalCents.Null)
	notNull("notes", p.Notes.Set, p.Notes.Null)
	if p.ClientID.Set {
		q.ClientID = p.ClientID.Ptr()
	}
	if p.ClientName.Set {
		q.ClientName = strings.TrimSpace(p.ClientName.Value)
	}
	if p.Items.Set {
		q.Items = p.Items.Value
	}
	if p.DiscountCents.Set {
		q.DiscountCents = p.DiscountCents.Value
	}
	if p.AdditionalCostsCents.Set {
		q.AdditionalCostsCents = p.AdditionalCostsCents.Value
	}
	if p.RecurringTotalCents.Set {
		q.RecurringTotalCents = p.RecurringTotalCents.Value
	}
	if p.PaymentPlan.Set {
		q.PaymentPlan = nil
		if !p.PaymentPlan.Null {
			q.PaymentPlan = p.PaymentPlan.Value
		}
	}
	if p.Notes.Set {
		q.Notes = p.Notes.Value
	}
	if p.ValidUntil.Set {
		q.ValidUntil = nil
		if v := p.ValidUntil.Ptr(); v != nil {
			t := v.Time
			q.ValidUntil = &t
		}
	}
	q.check(f)
}

// Update changes a quote's content as one write of w and records
// quote.updated with the fields that changed (nothing changed: no write, no
// event). An approved or canceled quote refuses updates (409, spec 7).
func Update(ctx context.Context, w *streams.Write, id string, p QuoteUpdate) (*Row, error) {
	q, err := Get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if q.Status == StatusApproved || q.Status == StatusCanceled {
		return nil, apierr.New(apierr.Conflict)
	}
	before, err := streams.Snap(q.View())
	if err != nil {
		return nil, err
	}
	status := q.Status
	var f apierr.Fields
	p.apply(q, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if p.ClientID.Set {
		if err := checkClient(ctx, w.Tx, q.ClientID); err != nil {
			return nil, err
		}
	}
	return q, save(ctx, w, q, before, status)
}

// SetStatus changes the status (dashboard action) and records
// quote.status_changed and quote.updated; the same status again changes
// nothing. A canceled quote never changes, and an approved one only goes to
// canceled, and only while it was not converted (409).
func SetStatus(ctx context.Context, w *streams.Write, id, status string) (*Row, error) {
	if !slices.Contains(Statuses, status) {
		return nil, apierr.Invalid("status", apierr.InvalidValue)
	}
	q, err := Get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if status == q.Status {
		return q, nil
	}
	if q.Status == StatusCanceled || (q.Status == StatusApproved && status != StatusCanceled) ||
		(q.Status == StatusApproved && (q.ConvertedOrderID != nil || q.ConvertedSaleID != nil)) {
		return nil, apierr.New(apierr.Conflict)
	}
	before, err := streams.Snap(q.View())
	if err != nil {
		return nil, err
	}
	was := q.Status
	q.setStatus(status, w)
	return q, save(ctx, w, q, before, was)
}

func (q *Row) setStatus(status string, w *streams.Write) {
	q.Status = status
	switch status {
	case StatusApproved:
		q.ApprovedAt = &w.At
	case StatusRejected:
		q.RejectedAt = &w.At
	}
}

// save writes a changed quote and records its events: quote.status_changed
// when the status moved from status, then quote.updated with the changed
// fields.
func save(ctx context.Context, w *streams.Write, q *Row, before streams.Snapshot, status string) error {
	fields, err := before.Changed(q.View())
	if err != nil || len(fields) == 0 {
		return err // nothing changed: no write, no event (spec 6.3 rule 3)
	}
	q.UpdatedAt = w.At
	if _, err := w.Tx.NewUpdate().Model(q).ExcludeColumn("id", "company_id", "number", "created_at").WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("quotes: update: %w", err)
	}
	after := q.View()
	var changes []streams.Change
	if q.Status != status {
		changes = append(changes, streams.Change{Type: EventStatusChanged, Object: after})
	}
	changes = append(changes, streams.Change{Type: EventUpdated, Object: after, ChangedFields: fields})
	_, err = streams.Record(ctx, w, changes...)
	return err
}

// Delete removes a quote as one write of w and records quote.deleted with
// the quote as it was. A quote that became a sale still active (not
// canceled) is 409 (spec 7); orders and sales made from it keep their
// content and lose quote_id (the foreign keys clear it), without events of
// their own (spec 6.3 rule 7).
func Delete(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	q, err := Get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if q.ConvertedSaleID != nil {
		active, err := w.Tx.NewSelect().Table("sales").Where("id = ?", *q.ConvertedSaleID).Where("canceled_at IS NULL").Exists(ctx)
		if err != nil {
			return nil, fmt.Errorf("quotes: delete: sale: %w", err)
		}
		if active {
			return nil, apierr.New(apierr.Conflict)
		}
	}
	if _, err := w.Tx.NewDelete().Model(q).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("quotes: delete: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventDeleted, Object: q.View()}); err != nil {
		return nil, err
	}
	return q, nil
}
