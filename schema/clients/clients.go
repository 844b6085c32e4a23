// Package clients holds client records: the company's customers and the
// leads captured through the API (a lead is a client record). The GET
// representation is View.
package clients

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/streams"
)

// Row is a stored client record.
type Row struct {
	bun.BaseModel `bun:"table:clients"`

	ID                string        `bun:"id,pk"`
	CompanyID         string        `bun:"company_id"`
	Name              string        `bun:"name"`
	Email             *string       `bun:"email"`
	Phone             *string       `bun:"phone"`
	EmailNormalized   *string       `bun:"email_normalized"`
	PhoneNormalized   *string       `bun:"phone_normalized"`
	Document          *string       `bun:"document"`
	Status            string        `bun:"status"`
	Source            *string       `bun:"source"`
	Notes             string        `bun:"notes"`
	BirthDate         *apitime.Date `bun:"birth_date,type:date"`
	NextFollowUp      *time.Time    `bun:"next_follow_up"`
	LastInteractionAt *time.Time    `bun:"last_interaction_at"`
	CreatedAt         time.Time     `bun:"created_at"`
	UpdatedAt         time.Time     `bun:"updated_at"`
}

// Client is a client as GET /clients/{id} returns it (docs/api.md).
type Client struct {
	Object            string        `json:"object" const:"client"`
	ID                string        `json:"id"`
	Name              string        `json:"name"`
	Email             *string       `json:"email"`
	Phone             *string       `json:"phone"`
	Document          *string       `json:"document"`
	Status            ClientStatus  `json:"status"`
	Source            *string       `json:"source"`
	Notes             string        `json:"notes"`
	BirthDate         *apitime.Date `json:"birth_date"`
	NextFollowUp      *apitime.Time `json:"next_follow_up"`
	LastInteractionAt *apitime.Time `json:"last_interaction_at"`
	CreatedAt         apitime.Time  `json:"created_at"`
	UpdatedAt         apitime.Time  `json:"updated_at"`
}

// SchemaName is the component's name in the OpenAPI document: generated
// clients name their own type Client (oapi-codegen, ogen), and the
// document's must not take it.
func (Client) SchemaName() string { return "ClientRecord" }

// View renders the GET representation.
func (c *Row) View() Client {
	return Client{
		Object: "client", ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone, Document: c.Document,
		Status: ClientStatus(c.Status), Source: c.Source, Notes: c.Notes, BirthDate: c.BirthDate,
		NextFollowUp: timePtr(c.NextFollowUp), LastInteractionAt: timePtr(c.LastInteractionAt),
		CreatedAt: apitime.At(c.CreatedAt), UpdatedAt: apitime.At(c.UpdatedAt),
	}
}

func timePtr(t *time.Time) *apitime.Time {
	if t == nil {
		return nil
	}
	v := apitime.At(*t)
	return &v
}

// Get reads a client of the transaction's company; another company's id is
// 404 resource_not_found.
func Get(ctx context.Context, tx bun.IDB, id string) (*Row, error) {
	return db.ByID[Row](ctx, tx, "cli", id, false)
}

// ClientCreate creates a client (dashboard action; lead capture fills one too).
type ClientCreate struct {
	Name      string        `json:"name"`
	Email     *string       `json:"email"`
	Phone     *string       `json:"phone"`
	Document  *string       `json:"document"`
	Status    *string       `json:"status"`
	Source    *string       `json:"source"`
	Notes     *string       `json:"notes"`
	BirthDate *apitime.Date `json:"birth_date"`
}

// Limits of client fields (docs/api.md).
const (
	// MaxText bounds free-text fields (notes).
	MaxText = 10000
	// MaxName bounds names and short texts (name, document, source).
	MaxName = 200
)

// Statuses of a client record; lead capture creates "lead" records.
const (
	StatusLead     = "lead"
	StatusActive   = "active"
	StatusInactive = "inactive"
)

// ClientStatus is a client record's status.
type ClientStatus string

// Values are the statuses.
func (ClientStatus) Values() []string { return []string{StatusLead, StatusActive, StatusInactive} }

func validStatus(s string) bool { return s == StatusLead || s == StatusActive || s == StatusInactive }

// Build validates in and returns the record it would store, adding every
// invalid field to f (so callers such as lead capture report them together
// with their own). Blank contacts count as absent.
func Build(companyID string, in ClientCreate, now time.Time, f *apierr.Fields) *Row {
	c := &Row{ID: ids.New("cli"), CompanyID: companyID, Name: strings.TrimSpace(in.Name), Status: StatusActive,
		CreatedAt: now, UpdatedAt: now, BirthDate: in.BirthDate}
	checkName(f, "name", c.Name, true)
	if in.Status != nil {
		if !validStatus(*in.Status) {
			f.Add("status", apierr.InvalidValue)
		}
		c.Status = *in.Status
	}
	c.Document = shortText(f, "document", in.Document)
	c.Source = shortText(f, "source", in.Source)
	if in.Notes != nil {
		if utf8.RuneCountInString(*in.Notes) > MaxText {
			f.Add("notes", apierr.TooLong)
		}
		c.Notes = *in.Notes
	}
	c.setEmail(f, in.Email)
	c.setPhone(f, in.Phone)
	return c
}

func checkName(f *apierr.Fields, param, v string, required bool) {
	switch n := utf8.RuneCountInString(v); {
	case n == 0 && required:
		f.Add(param, apierr.Required)
	case n > MaxName:
		f.Add(param, apierr.TooLong)
	}
}

// shortText trims an optional short text; blank is absent.
func shortText(f *apierr.Fields, param string, v *string) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	s := strings.TrimSpace(*v)
	checkName(f, param, s, false)
	return &s
}

// setEmail stores an e-mail with its normalised form; nil or blank clears it.
func (c *Row) setEmail(f *apierr.Fields, v *string) {
	c.Email, c.EmailNormalized = nil, nil
	if v == nil || strings.TrimSpace(*v) == "" {
		return
	}
	e, n, ok := ParseEmail(*v)
	if !ok {
		f.Add("email", apierr.InvalidValue)
	}
	c.Email, c.EmailNormalized = &e, &n
}

// setPhone stores a phone with its normalised form; nil or blank clears it.
func (c *Row) setPhone(f *apierr.Fields, v *string) {
	c.Phone, c.PhoneNormalized = nil, nil
	if v == nil || strings.TrimSpace(*v) == "" {
		return
	}
	p := strings.TrimSpace(*v)
	if utf8.RuneCountInString(p) > MaxPhoneLen {
		f.Add("phone", apierr.TooLong)
		return
	}
	n, ok := NormalizePhone(p)
	if !ok {
		f.Add("phone", apierr.InvalidValue)
	}
	c.Phone, c.PhoneNormalized = &p, &n
}

// Create stores a new client without recording an event (seeding and other
// modules' fixtures); dashboard and API writes use CreateRecorded. A contact
// already on another record is a 409 conflict.
func Create(ctx context.Context, tx bun.IDB, companyID string, in ClientCreate, now time.Time) (*Row, error) {
	var f apierr.Fields
	c := Build(companyID, in, now, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := insert(ctx, tx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// CreateRecorded is Create as one write of w: it records client.created.
func CreateRecorded(ctx context.Context, w *streams.Write, in ClientCreate) (*Row, error) {
	c, err := Create(ctx, w.Tx, w.CompanyID, in, w.At)
	if err != nil {
		return nil, err
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventCreated, Object: c.View()}); err != nil {
		return nil, err
	}
	return c, nil
}

// insert stores c; a unique contact taken by another record is 409. A
// unique violation aborts the transaction, which the caller then ends.
func insert(ctx context.Context, tx bun.IDB, c *Row) error {
	if _, err := tx.NewInsert().Model(c).Exec(ctx); err != nil {
		if db.IsUniqueViolation(err) {
			return apierr.Wrap(apierr.Conflict, err)
		}
		return fmt.Errorf("clients: create: %w", err)
	}
	return nil
}
