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
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/idempotency"
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
	Tasks []Task
	// Every is the pause between rounds (default 1 minute).
	Every time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives failures and what each round deleted (default slog).
	Log *slog.Logger
}

// Run sweeps now and then every r.Every until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	every := r.Every
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.log().WarnContext(ctx, "sweep failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce runs every task once; a failing task does not stop the others.
func (r *Runner) RunOnce(ctx context.Context) error {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	var errs []error
	for _, task := range r.Tasks {
		n, err := task.Sweep(ctx, now())
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", task.Name, err))
		}
		if n > 0 {
			r.log().InfoContext(ctx, "swept", "task", task.Name, "deleted", n)
		}
	}
	return errors.Join(errs...)
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
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
