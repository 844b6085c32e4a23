package clients

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
)

// FindByContact returns the company's record holding the normalised e-mail
// or phone of c, or nil. When the e-mail and the phone belong to two
// different records, the e-mail's wins (it names a person more precisely
// than a shared phone line).
func FindByContact(ctx context.Context, tx bun.IDB, c *Row) (*Row, error) {
	if c.EmailNormalized == nil && c.PhoneNormalized == nil {
		return nil, nil
	}
	q := tx.NewSelect().Model(new(Row)).WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		if c.EmailNormalized != nil {
			q = q.WhereOr("email_normalized = ?", *c.EmailNormalized)
		}
		if c.PhoneNormalized != nil {
			q = q.WhereOr("phone_normalized = ?", *c.PhoneNormalized)
		}
		return q
	})
	var found []Row
	if err := q.Order("id").Limit(2).Scan(ctx, &found); err != nil {
		return nil, fmt.Errorf("clients: find by contact: %w", err)
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return &found[0], nil
	}
	for i := range found {
		if c.EmailNormalized != nil && found[i].EmailNormalized != nil && *found[i].EmailNormalized == *c.EmailNormalized {
			return &found[i], nil
		}
	}
	return &found[0], nil
}

// errVanished: the record that blocked an insert was gone when read.
var errVanished = errors.New("clients: conflicting record vanished")

// InsertOrFind stores c unless its e-mail or phone already belongs to a
// record of the company; then it returns that record, untouched, and
// created=false. Concurrent calls for the same new contact create exactly
// one record: the insert skips on the unique contact indexes (waiting for a
// concurrent insert of the same contact to commit), and the statement that
// follows sees the committed record (READ COMMITTED).
func InsertOrFind(ctx context.Context, tx bun.IDB, c *Row) (got *Row, created bool, err error) {
	for range 3 {
		res, err := tx.NewInsert().Model(c).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("clients: insert: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, false, fmt.Errorf("clients: insert: %w", err)
		} else if n == 1 {
			return c, true, nil
		}
		existing, err := FindByContact(ctx, tx, c)
		if err != nil {
			return nil, false, err
		}
		if existing != nil {
			return existing, false, nil
		}
		// The blocking record was deleted between the two statements: try
		// again (the insert may now succeed).
	}
	return nil, false, apierr.Wrap(apierr.Conflict, errVanished)
}
