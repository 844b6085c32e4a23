package orders

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/clients"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/tenant"
)

// getType reads a type of the company (404 otherwise).
func getType(ctx context.Context, tx bun.IDB, id string) (*TypeRow, error) {
	return db.ByID[TypeRow](ctx, tx, "sot", id, false)
}

// checkType: the type must belong to the company (404) and be active (an
// inactive type is off the dashboard picker: 422).
func checkType(ctx context.Context, tx bun.IDB, id *string) error {
	if id == nil {
		return nil
	}
	t, err := getType(ctx, tx, *id)
	if err != nil {
		return err
	}
	if !t.Active {
		return apierr.Invalid("type_id", apierr.InvalidValue)
	}
	return nil
}

// checkClient: the client must belong to the company (404).
func checkClient(ctx context.Context, tx bun.IDB, id *string) error {
	if id == nil {
		return nil
	}
	_, err := clients.Get(ctx, tx, *id)
	return err
}

// allValid reports whether every id has the shape of prefix's ids.
func allValid(prefix string, list []string) bool {
	for _, id := range list {
		if !ids.Valid(prefix, id) {
			return false
		}
	}
	return true
}

// checkTechnicians: every id must be an active member of the company of
// type technician; anything else is 404 resource_not_found, as for an
// unknown id (5.2: ids of other companies behave as nonexistent).
func checkTechnicians(ctx context.Context, tx bun.IDB, lead *string, support []string) error {
	want := support
	if lead != nil {
		want = append([]string{*lead}, support...)
	}
	if len(want) == 0 {
		return nil
	}
	if !allValid("mem", want) {
		return apierr.New(apierr.ResourceNotFound)
	}
	n, err := tx.NewSelect().Model((*tenant.Member)(nil)).Where("id IN (?)", bun.List(want)).
		Where("type = ?", tenant.TypeTechnician).Where("status = 'active'").Count(ctx)
	if err != nil {
		return fmt.Errorf("orders: technicians: %w", err)
	}
	if n != int64(len(want)) {
		return apierr.New(apierr.ResourceNotFound)
	}
	return nil
}
