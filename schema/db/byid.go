package db

import (
	"context"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/ids"
)

// ByID reads the row (of bun model T) whose id is id, as the transaction's
// company sees it (row-level security), locked FOR UPDATE when lock. An id
// that is not a well-formed id of prefix, another company's id or a missing
// one are all 404 resource_not_found: the API never tells them apart.
func ByID[T any](ctx context.Context, tx bun.IDB, prefix, id string, lock bool) (*T, error) {
	if !ids.Valid(prefix, id) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	r := new(T)
	q := tx.NewSelect().Model(r).Where("id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, apierr.NoRows(err)
	}
	return r, nil
}
