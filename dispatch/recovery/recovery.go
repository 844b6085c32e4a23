// Package recovery runs the recovery worker: it advances the recovery
// tasks that POST /webhook_endpoints/{id}/recover starts (schema/webhooks),
// resending their deliveries in batches as ordinary deliveries on
// DELIVERIES, where the dispatcher's company and endpoint caps apply to
// them as to any delivery. Like the relay it is cross-company: it asks the
// database only which companies have a running task, then advances each
// company's tasks in that company's transaction (row-level security),
// locking them with FOR UPDATE SKIP LOCKED, so any number of workers may
// run. It connects as the worker role.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
)

// DefaultEvery is the pause between rounds.
const DefaultEvery = time.Second

// Runner advances recovery tasks until its context ends.
type Runner struct {
	// Base: the logger, and the business clock each round runs at.
	service.Base
	DB *bun.DB // the worker role's pool
	// Publisher publishes each round's resends after commit; nil leaves
	// them to the relay.
	Publisher streams.AfterCommitter
	Interval  time.Duration // 0: DefaultEvery
	Pace      webhooks.RecoverPace
	// Only, when set, confines the worker to these companies (tests that
	// share a database; a worker per group of tenants).
	Only []string
}

// Run advances the tasks every r.Interval until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	every := r.Interval
	if every <= 0 {
		every = DefaultEvery
	}
	return r.Every(ctx, every, "recovery resent deliveries", r.RunOnce)
}

// RunOnce advances every company's running tasks by one round and returns
// how many deliveries it resent.
func (r *Runner) RunOnce(ctx context.Context) (int, error) {
	companies := r.Only
	if len(companies) == 0 {
		var err error
		if companies, err = webhooks.RecoverCompanies(ctx, r.DB, 1000); err != nil {
			return 0, err
		}
	}
	total := 0
	var errs []error
	for _, co := range companies {
		n, err := r.company(ctx, co)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("company %s: %w", co, err))
		}
	}
	return total, errors.Join(errs...)
}

func (r *Runner) company(ctx context.Context, companyID string) (int, error) {
	wr := streams.Writer{DB: r.DB, Publisher: r.Publisher, Now: r.BusinessNow}
	var n int
	unit := streams.Unit{CompanyID: companyID, Actor: streams.Actor{Kind: streams.ActorRoutine}}
	err := wr.Run(ctx, unit, func(ctx context.Context, w *streams.Write) error {
		var err error
		n, err = webhooks.AdvanceRecovery(ctx, w, r.Pace)
		return err
	})
	return n, err
}
