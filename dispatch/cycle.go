package dispatch

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/streams"
)

// The dispatcher's database work runs in cycles (batcher): requests that
// queue while a transaction runs share the next one, and one cycle's
// transaction records the outcomes just decided (record.go: the attempts
// sent, the deliveries closed without one) and reads what the deliveries
// about to be sent need (prepare.go) — BEGIN, COMMIT and the commit's
// fsync paid once for both (issue 16). Both are one statement: one call of
// oficina_dispatch_record, then one of oficina_dispatch_views (sql/),
// whatever the companies. They scope each company's rows with
// app.company_id, as tenant.Tx does, visiting companies in id order, so two
// cycles do not wait on each other in a cycle of locks; the rare mails the
// record asks for scope themselves with tenant.Scope.

// stageReq is one request of a cycle: a delivery to prepare or an outcome
// to record — with, for an outcome, the delivery to prepare right after it
// in the same statement (next: the one after it in its object's order,
// which the record lets through, decision 0039).
type stageReq struct {
	prepare *streams.DeliveryMessage
	record  *recordReq
	next    *streams.DeliveryMessage
}

// stageRes is the answer to a stageReq: its plan or its outcome (and next's
// plan, when it was read).
type stageRes struct {
	plan plan
	out  outcome
	next *plan
}

// prepared is a delivery a cycle prepares: for request req, at place at of
// the statement's deliveries; next when it is a record's next.
type prepared struct {
	req, at int
	next    bool
}

// cycle runs one transaction: the records of reqs, then their prepares.
// When it fails as a whole its records are tried one by one and its
// prepares together, so one bad row cannot fail its neighbours.
func (d *Dispatcher) cycle(ctx context.Context, reqs []stageReq) []batchResult[stageRes] {
	var recs []recordReq
	var dms []streams.DeliveryMessage
	var ri, pi []int // the requests that record, and those that prepare
	var preps []prepared
	for i, q := range reqs {
		switch {
		case q.record != nil:
			recs, ri = append(recs, *q.record), append(ri, i)
			if q.next != nil {
				preps, dms = append(preps, prepared{req: i, at: len(dms), next: true}), append(dms, *q.next)
			}
		default:
			preps, pi = append(preps, prepared{req: i, at: len(dms)}), append(pi, i)
			dms = append(dms, *q.prepare)
		}
	}
	var outs []batchResult[outcome]
	var plans []batchResult[plan]
	now := d.cfg.BusinessNow()
	err := d.cfg.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		args, order, err := recordArgs(recs, now, d.cfg.DisableAfter)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		rec, views, err := cycleStatement(ctx, tx, args, dms)
		if err != nil {
			return err
		}
		if outs, err = d.recorded(ctx, tx, recs, order, rec, now); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		if plans, err = d.prepare(dms, views, now); err != nil {
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
		for _, p := range preps {
			switch pl := plans[p.at]; {
			case !p.next:
				out[p.req] = batchResult[stageRes]{res: stageRes{plan: pl.res}, err: pl.err}
			case pl.err == nil:
				out[p.req].res.next = &pl.res
			}
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
		again := make([]stageReq, len(pi))
		for k, i := range pi {
			again[k] = reqs[i]
		}
		for k, r := range d.cycle(ctx, again) {
			out[pi[k]] = r
		}
	}
	return out
}

// cycleStatement runs a cycle's one statement: the record of rec (its
// arguments, nil without outcomes), then the views of dms, and returns
// the JSON of each (nil when not asked). Together, the record is a
// materialized CTE, so it runs first and the views see what it wrote (an
// endpoint it disabled).
func cycleStatement(ctx context.Context, tx bun.Tx, rec []any, dms []streams.DeliveryMessage) (recorded, views []byte, err error) {
	var vargs []any
	if len(dms) > 0 {
		var companies, dids, eids []string
		for _, dm := range dms {
			companies, dids, eids = append(companies, dm.CompanyID), append(dids, dm.DeliveryID), append(eids, dm.EndpointID)
		}
		vargs = []any{pgdialect.Array(companies), pgdialect.Array(dids), pgdialect.Array(eids)}
	}
	switch {
	case rec != nil && vargs != nil:
		err = tx.QueryRowContext(ctx, "WITH r AS MATERIALIZED (SELECT "+recordCall+" AS rec) SELECT r.rec, "+viewsCall+" FROM r",
			append(rec, vargs...)...).Scan(&recorded, &views)
	case rec != nil:
		err = tx.QueryRowContext(ctx, "SELECT "+recordCall, rec...).Scan(&recorded)
	case vargs != nil:
		err = tx.QueryRowContext(ctx, "SELECT "+viewsCall, vargs...).Scan(&views)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("record and read views: %w", err)
	}
	return recorded, views, nil
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
