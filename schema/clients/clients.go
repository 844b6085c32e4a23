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
	"oficina/schema/ids"
)

// Client is a stored client record.
type Client struct {
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

// View is a client as GET /clients/{id} returns it (docs/api.md).
type View struct {
	Object            string        `json:"object"`
	ID                string        `json:"id"`
	Name              string        `json:"name"`
	Email             *string       `json:"email"`
	Phone             *string       `json:"phone"`
	Document          *string       `json:"document"`
	Status            string        `json:"status"`
	Source            *string       `json:"source"`
	Notes             string        `json:"notes"`
	BirthDate         *apitime.Date `json:"birth_date"`
	NextFollowUp      *apitime.Time `json:"next_follow_up"`
	LastInteractionAt *apitime.Time `json:"last_interaction_at"`
	CreatedAt         apitime.Time  `json:"created_at"`
	UpdatedAt         apitime.Time  `json:"updated_at"`
}

// View renders the GET representation.
func (c *Client) View() View {
	return View{
		Object: "client", ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone, Document: c.Document,
		Status: c.Status, Source: c.Source, Notes: c.Notes, BirthDate: c.BirthDate,
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
func Get(ctx context.Context, tx bun.IDB, id string) (*Client, error) {
	if !ids.Valid("cli", id) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	c := new(Client)
	if err := tx.NewSelect().Model(c).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, apierr.NoRows(err)
	}
	return c, nil
}

// Input creates a client (dashboard action; lead capture builds its own).
type Input struct {
	Name      string        `json:"name"`
	Email     *string       `json:"email"`
	Phone     *string       `json:"phone"`
	Document  *string       `json:"document"`
	Status    *string       `json:"status"`
	Source    *string       `json:"source"`
	Notes     *string       `json:"notes"`
	BirthDate *apitime.Date `json:"birth_date"`
}

// MaxText bounds free-text fields (docs/api.md).
const MaxText = 10000

// Create stores a new client. Contacts are normalised for de-duplication; a
// contact already on another record is a 409 conflict.
func Create(ctx context.Context, tx bun.IDB, companyID string, in Input, now time.Time) (*Client, error) {
	var f apierr.Fields
	name := strings.TrimSpace(in.Name)
	if name == "" {
		f.Add("name", "required")
	} else if utf8.RuneCountInString(name) > 200 {
		f.Add("name", "too_long")
	}
	c := &Client{ID: ids.New("cli"), CompanyID: companyID, Name: name, Status: "active", CreatedAt: now, UpdatedAt: now,
		Document: in.Document, Source: in.Source, BirthDate: in.BirthDate}
	if in.Status != nil {
		if *in.Status != "lead" && *in.Status != "active" && *in.Status != "inactive" {
			f.Add("status", "invalid_value")
		}
		c.Status = *in.Status
	}
	if in.Notes != nil {
		if utf8.RuneCountInString(*in.Notes) > MaxText {
			f.Add("notes", "too_long")
		}
		c.Notes = *in.Notes
	}
	if in.Email != nil && strings.TrimSpace(*in.Email) != "" {
		e := strings.TrimSpace(*in.Email)
		n, ok := NormalizeEmail(e)
		if !ok {
			f.Add("email", "invalid_value")
		}
		c.Email, c.EmailNormalized = &e, &n
	}
	if in.Phone != nil && strings.TrimSpace(*in.Phone) != "" {
		p := strings.TrimSpace(*in.Phone)
		n, ok := NormalizePhone(p)
		if !ok {
			f.Add("phone", "invalid_value")
		}
		c.Phone, c.PhoneNormalized = &p, &n
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(c).Exec(ctx); err != nil {
		return nil, fmt.Errorf("clients: create: %w", err)
	}
	return c, nil
}
