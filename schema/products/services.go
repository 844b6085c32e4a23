package products

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
	"oficina/schema/field"
	"oficina/schema/ids"
	"oficina/streams"
)

// ServiceRow is an entry of the company's service catalogue.
type ServiceRow struct {
	bun.BaseModel `bun:"table:services,alias:svc"`

	ID             string    `bun:"id,pk"`
	CompanyID      string    `bun:"company_id"`
	Name           string    `bun:"name"`
	BasePriceCents int64     `bun:"base_price_cents"`
	Active         bool      `bun:"active"`
	CreatedAt      time.Time `bun:"created_at"`
	UpdatedAt      time.Time `bun:"updated_at"`
}

// Service is the representation of a service.
type Service struct {
	Object         string       `json:"object" const:"service"`
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	BasePriceCents int64        `json:"base_price_cents"`
	Active         bool         `json:"active"`
	CreatedAt      apitime.Time `json:"created_at"`
	UpdatedAt      apitime.Time `json:"updated_at"`
}

// View renders the service.
func (s *ServiceRow) View() Service {
	return Service{Object: "service", ID: s.ID, Name: s.Name, BasePriceCents: s.BasePriceCents, Active: s.Active,
		CreatedAt: apitime.At(s.CreatedAt), UpdatedAt: apitime.At(s.UpdatedAt)}
}

// ServiceCreate creates or changes a service (dashboard action).
type ServiceCreate struct {
	Name           field.Opt[string] `json:"name"`
	BasePriceCents field.Opt[int64]  `json:"base_price_cents"`
	Active         field.Opt[bool]   `json:"active"`
}

func (in *ServiceCreate) apply(s *ServiceRow) error {
	var f apierr.Fields
	if in.Name.Set {
		s.Name = strings.TrimSpace(in.Name.Value)
	}
	if s.Name == "" {
		f.Add("name", apierr.Required)
	} else if utf8.RuneCountInString(s.Name) > MaxName {
		f.Add("name", apierr.TooLong)
	}
	if in.BasePriceCents.Set {
		s.BasePriceCents = in.BasePriceCents.Value
	}
	checkPrice(&f, "base_price_cents", s.BasePriceCents)
	if in.Active.Set {
		s.Active = in.Active.Value
	}
	return f.Err()
}

// GetService reads a service.
func GetService(ctx context.Context, tx bun.IDB, id string, forUpdate bool) (*ServiceRow, error) {
	return db.ByID[ServiceRow](ctx, tx, "svc", id, forUpdate)
}

// CreateService adds a service and records service.created.
func CreateService(ctx context.Context, w *streams.Write, in ServiceCreate) (*ServiceRow, error) {
	s := &ServiceRow{ID: ids.New("svc"), CompanyID: w.CompanyID, Active: true, CreatedAt: w.At, UpdatedAt: w.At}
	if err := in.apply(s); err != nil {
		return nil, err
	}
	if _, err := w.Tx.NewInsert().Model(s).Exec(ctx); err != nil {
		return nil, fmt.Errorf("products: create service: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventServiceCreated, Object: s.View()}); err != nil {
		return nil, fmt.Errorf("products: events: %w", err)
	}
	return s, nil
}

// UpdateService changes a service and records service.updated when its
// representation changed.
func UpdateService(ctx context.Context, w *streams.Write, id string, in ServiceCreate) (*ServiceRow, error) {
	s, err := GetService(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	before, err := streams.Snap(s.View())
	if err != nil {
		return nil, err
	}
	if err := in.apply(s); err != nil {
		return nil, err
	}
	fields, err := before.Changed(s.View())
	if err != nil || len(fields) == 0 {
		return s, err // nothing changed: no write, no event (spec 6.3 rule 3)
	}
	s.UpdatedAt = w.At
	if _, err := w.Tx.NewUpdate().Model(s).Column("name", "base_price_cents", "active", "updated_at").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("products: update service: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventServiceUpdated, Object: s.View(), ChangedFields: fields}); err != nil {
		return nil, fmt.Errorf("products: events: %w", err)
	}
	return s, nil
}

// DeleteService removes a service (dashboard action) and records
// service.deleted with the service as it was.
func DeleteService(ctx context.Context, w *streams.Write, id string) (*ServiceRow, error) {
	s, err := GetService(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if _, err := w.Tx.NewDelete().Model(s).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("products: delete service: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventServiceDeleted, Object: s.View()}); err != nil {
		return nil, fmt.Errorf("products: events: %w", err)
	}
	return s, nil
}
