// Package sweep runs the periodic clean-ups that keep stored data within
// its retention: each Task deletes what expired at a given time. A Runner
// runs its tasks at start and then every interval until its context ends;
// any number of processes may run the same tasks (deleting twice is
// harmless), so every API process runs one.
//
// Tasks that work across companies list the companies with something to
// delete through a narrow definer function and delete company by company
// under row-level security (PerCompany), as DESIGN.md asks of
// cross-company workers.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/idempotency"
	"oficina/schema/service"
	"oficina/tenant"
)

// Task is one clean-up.
type Task struct {
	Name string
	// Sweep deletes what has expired at now and returns how many rows.
	Sweep func(ctx context.Context, now time.Time) (int, error)
}

// Runner runs tasks periodically.
type Runner struct {
	// Base: the logger (failures and what each round deleted), and the
	// business clock that says what has expired.
	service.Base
	Tasks []Task
	// Interval is the pause between rounds (default 1 minute).
	Interval time.Duration
}

// Run sweeps now and then every r.Interval until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	every := r.Interval
	if every <= 0 {
		every = time.Minute
	}
	return r.Every(ctx, every, "sweep", func(ctx context.Context) (int, error) { return 0, r.RunOnce(ctx) })
}

// RunOnce runs every task once; a failing task does not stop the others.
func (r *Runner) RunOnce(ctx context.Context) error {
	var errs []error
	for _, task := range r.Tasks {
		n, err := task.Sweep(ctx, r.BusinessNow())
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", task.Name, err))
		}
		if n > 0 {
			r.Logger().InfoContext(ctx, "swept", "task", task.Name, "deleted", n)
		}
	}
	return errors.Join(errs...)
}

// companiesPerRound bounds one listing of companies with expired rows.
const companiesPerRound = 100

// PerCompany is a task over every company: list names up to limit
// companies holding rows expired at now, purge deletes them inside each
// company's transaction. Rounds repeat until no company is listed.
func PerCompany(name string, db bun.IDB,
	list func(ctx context.Context, db bun.IDB, now time.Time, limit int) ([]string, error),
	purge func(ctx context.Context, tx bun.IDB, now time.Time) (int, error),
) Task {
	return Task{Name: name, Sweep: func(ctx context.Context, now time.Time) (int, error) {
		total := 0
		for {
			ids, err := list(ctx, db, now, companiesPerRound)
			if err != nil || len(ids) == 0 {
				return total, err
			}
			before := total
			for _, id := range ids {
				err := tenant.Tx(ctx, db, id, func(ctx context.Context, tx bun.Tx) error {
					n, err := purge(ctx, tx, now)
					total += n
					return err
				})
				if err != nil {
					return total, fmt.Errorf("company %s: %w", id, err)
				}
			}
			if total == before {
				return total, nil // listed but nothing to delete: never spin
			}
		}
	}}
}

// Idempotency deletes idempotency records past their 24 hours (spec 4.1);
// lookups already ignore them, this only reclaims the space.
func Idempotency(db bun.IDB) Task {
	return PerCompany("idempotency", db, idempotency.ExpiredCompanies, idempotency.DeleteExpired)
}
