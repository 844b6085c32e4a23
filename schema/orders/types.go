// Package orders holds service orders and their types: records, store
// functions and the rules of parts 2.3, 2.5 and 3.1.
package orders

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/schema/page"
)

// TypeRow is a stored service order type.
type TypeRow struct {
	bun.BaseModel `bun:"table:service_order_types"`

	ID               string    `bun:"id,pk"`
	CompanyID        string    `bun:"company_id"`
	Name             string    `bun:"name"`
	Active           bool      `bun:"active"`
	RequiredOnCreate bool      `bun:"required_on_create"`
	CreatedAt        time.Time `bun:"created_at"`
	UpdatedAt        time.Time `bun:"updated_at"`
}

// ServiceOrderType is a service order type (2.3) as the API returns it.
type ServiceOrderType struct {
	Object           string `json:"object" const:"service_order_type"`
	ID               string `json:"id"`
	Name             string `json:"name"`
	Active           bool   `json:"active"`
	RequiredOnCreate bool   `json:"required_on_create"`
}

// View renders the type.
func (t *TypeRow) View() ServiceOrderType {
	return ServiceOrderType{Object: "service_order_type", ID: t.ID, Name: t.Name, Active: t.Active,
		RequiredOnCreate: t.RequiredOnCreate}
}

// ServiceOrderTypeCreate creates or changes a type (dashboard action).
type ServiceOrderTypeCreate struct {
	Name             *string `json:"name"`
	Active           *bool   `json:"active"`
	RequiredOnCreate *bool   `json:"required_on_create"`
}

func (in ServiceOrderTypeCreate) apply(t *TypeRow) error {
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
	}
	if t.Name == "" || utf8.RuneCountInString(t.Name) > 120 {
		return apierr.Invalid("name", apierr.Required)
	}
	if in.Active != nil {
		t.Active = *in.Active
	}
	if in.RequiredOnCreate != nil {
		t.RequiredOnCreate = *in.RequiredOnCreate
	}
	return nil
}

// ListTypes lists the company's types, newest first.
func ListTypes(ctx context.Context, tx bun.IDB, p page.Params, s page.Sync) (page.List[ServiceOrderType], error) {
	var rows []TypeRow
	if err := p.Apply(s.Apply(tx.NewSelect().Model(&rows), "created_at", "updated_at"), "id").Scan(ctx); err != nil {
		return page.List[ServiceOrderType]{}, fmt.Errorf("orders: list types: %w", err)
	}
	views := make([]ServiceOrderType, len(rows))
	for i := range rows {
		views[i] = rows[i].View()
	}
	return page.Wrap(p, views), nil
}

// CreateType adds a type to the company.
func CreateType(ctx context.Context, tx bun.IDB, companyID string, in ServiceOrderTypeCreate, now time.Time) (ServiceOrderType, error) {
	t := &TypeRow{ID: ids.New("sot"), CompanyID: companyID, Active: true, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(t); err != nil {
		return ServiceOrderType{}, err
	}
	if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
		return ServiceOrderType{}, fmt.Errorf("orders: create type: %w", err)
	}
	return t.View(), nil
}

// UpdateType changes a type.
func UpdateType(ctx context.Context, tx bun.IDB, id string, in ServiceOrderTypeCreate, now time.Time) (ServiceOrderType, error) {
	t, err := db.ByID[TypeRow](ctx, tx, "sot", id, true)
	if err != nil {
		return ServiceOrderType{}, err
	}
	if err := in.apply(t); err != nil {
		return ServiceOrderType{}, err
	}
	t.UpdatedAt = now
	if _, err := tx.NewUpdate().Model(t).WherePK().Exec(ctx); err != nil {
		return ServiceOrderType{}, fmt.Errorf("orders: update type: %w", err)
	}
	return t.View(), nil
}
