package dispatch

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"oficina/streams"
)

// The dispatcher's database work runs in cycles (batcher): requests that
// queue while a transaction runs share the next one, and one cycle's
// transaction records the attempts just sent (record.go) and prepares the
// deliveries about to be sent (prepare.go) — BEGIN, COMMIT and the commit's
// fsync paid once for both (issue 16). The bulk of it, the checks of every
// delivery and the records of the successes, is one call each of the
// PL/pgSQL functions oficina_dispatch_views and oficina_dispatch_succeeded
// (sql/), whatever the companies. They scope each company's rows with
// app.company_id, as tenant.Tx does; the rarer per-delivery writes (closing
// a delivery, a failed attempt) scope themselves with tenant.Scope.
// Companies are visited in id order, so two cycles do not wait on each
// other in a cycle of locks.

// stageReq is one request of a cycle: a delivery to prepare or an attempt
// to record.
type stageReq struct {
	prepare *streams.DeliveryMessage
	record  *attemptReq
}

// stageRes is the answer to a stageReq: its plan or its outcome.
type stageRes struct {
	plan plan
	out  outcome
}

// cycle runs one transaction: the records of reqs, then their prepares.
// When it fails as a whole its records are tried one by one and its
// prepares together, so one bad row cannot fail its neighbours.
func (d *Dispatcher) cycle(ctx context.Context, reqs []stageReq) []batchResult[stageRes] {
	var recs []attemptReq
	var dms []streams.DeliveryMessage
	var ri, pi []int
	for i, q := range reqs {
		if q.record != nil {
			recs, ri = append(recs, *q.record), append(ri, i)
		} else {
			dms, pi = append(dms, *q.prepare), append(pi, i)
		}
	}
	var outs []batchResult[outcome]
	var plans []batchResult[plan]
	now := d.cfg.BusinessNow()
	err := d.cfg.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Records first: they finish sends already made. When all succeeded
		// their call goes with the prepare's, in one statement.
		outs0, joined, err := d.recordTx(ctx, tx, recs, now, len(dms) > 0)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		outs = outs0
		if plans, err = d.prepareTx(ctx, tx, dms, now, joined); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		return nil
	})
	out := make([]batchResult[stageRes], len(reqs))
	switch {
	case err == nil:
		for k, i := range ri {
			out[i] = batchResult[stageRes]{res: stageRes{out: outs[k].res}, err: outs[k].err}
		}
		for k, i := range pi {
			out[i] = batchResult[stageRes]{res: stageRes{plan: plans[k].res}, err: plans[k].err}
		}
		return out
	case len(reqs) == 1 || len(ri) == 0 || ctx.Err() != nil:
		name := "record"
		if len(ri) == 0 {
			name = "prepare"
		}
		return allFailed[stageRes](len(reqs), fmt.Errorf("dispatch: %s: %w", name, err))
	}
	for _, i := range ri {
		out[i] = d.cycle(ctx, reqs[i:i+1])[0]
	}
	if len(pi) > 0 {
		preps := make([]stageReq, len(pi))
		for k, i := range pi {
			preps[k] = reqs[i]
		}
		for k, r := range d.cycle(ctx, preps) {
			out[pi[k]] = r
		}
	}
	return out
}

// byCompany groups the indexes 0..n-1 by company id, companies in id order.
func byCompany(n int, company func(i int) string) [][]int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(company(a), company(b)) })
	var groups [][]int
	for i, x := range idx {
		if i == 0 || company(x) != company(idx[i-1]) {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], x)
	}
	return groups
}
