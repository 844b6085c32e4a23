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
	"oficina/schema/ids"
	"oficina/schema/page"
)

// ServiceOrderType is a service order type (2.3).
type ServiceOrderType struct {
	bun.BaseModel `bun:"table:service_order_types"`

	Object           string    `bun:"-" json:"object"`
	ID               string    `bun:"id,pk" json:"id"`
	CompanyID        string    `bun:"company_id" json:"-"`
	Name             string    `bun:"name" json:"name"`
	Active           bool      `bun:"active" json:"active"`
	RequiredOnCreate bool      `bun:"required_on_create" json:"required_on_create"`
	CreatedAt        time.Time `bun:"created_at" json:"-"`
	UpdatedAt        time.Time `bun:"updated_at" json:"-"`
}

// TypeInput creates or changes a type (dashboard action).
type TypeInput struct {
	Name             *string `json:"name"`
	Active           *bool   `json:"active"`
	RequiredOnCreate *bool   `json:"required_on_create"`
}

func (in TypeInput) apply(t *ServiceOrderType) error {
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
	}
	if t.Name == "" || utf8.RuneCountInString(t.Name) > 120 {
		return apierr.Invalid("name", "required")
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
func ListTypes(ctx context.Context, tx bun.IDB, p page.Params) (page.List[ServiceOrderType], error) {
	var rows []ServiceOrderType
	if err := p.Apply(tx.NewSelect().Model(&rows), "id").Scan(ctx); err != nil {
		return page.List[ServiceOrderType]{}, fmt.Errorf("orders: list types: %w", err)
	}
	for i := range rows {
		rows[i].Object = "service_order_type"
	}
	return page.Wrap(p, rows), nil
}

// CreateType adds a type to the company.
func CreateType(ctx context.Context, tx bun.IDB, companyID string, in TypeInput, now time.Time) (*ServiceOrderType, error) {
	t := &ServiceOrderType{ID: ids.New("sot"), CompanyID: companyID, Active: true, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(t); err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
		return nil, fmt.Errorf("orders: create type: %w", err)
	}
	t.Object = "service_order_type"
	return t, nil
}

// UpdateType changes a type.
func UpdateType(ctx context.Context, tx bun.IDB, id string, in TypeInput, now time.Time) (*ServiceOrderType, error) {
	t := new(ServiceOrderType)
	if err := tx.NewSelect().Model(t).Where("id = ?", id).For("UPDATE").Scan(ctx); err != nil {
		return nil, apierr.NoRows(err)
	}
	if err := in.apply(t); err != nil {
		return nil, err
	}
	t.UpdatedAt = now
	if _, err := tx.NewUpdate().Model(t).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("orders: update type: %w", err)
	}
	t.Object = "service_order_type"
	return t, nil
}
