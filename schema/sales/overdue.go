package sales

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/streams"
)

// RoutineResult counts what a run of the overdue routine marked.
type RoutineResult struct {
	Object       string `json:"object" const:"routine_run"`
	Companies    int    `json:"companies"`
	Sales        int    `json:"sales"`
	Installments int    `json:"installments"`
}

// RoutineUnit is the write unit of the overdue routine for one company,
// run at now.
func RoutineUnit(companyID string, now time.Time) streams.Unit {
	return streams.Unit{CompanyID: companyID, Actor: streams.Actor{Kind: streams.ActorRoutine}, At: now}
}

// MarkOverdue is the daily routine of one company, run as the write unit w
// (RoutineUnit): installments past due (before today in the company's time
// zone) become overdue and so do their sales. Each sale marked yields a
// sale.updated written by the routine, which is always summarized (spec 6.3
// rule 5) and published after commit like any other write's.
func MarkOverdue(ctx context.Context, w *streams.Write) (RoutineResult, error) {
	res := RoutineResult{Object: "routine_run"}
	var tz string
	if err := w.Tx.NewRaw("SELECT timezone FROM companies WHERE id = ?", w.CompanyID).Scan(ctx, &tz); err != nil {
		return res, fmt.Errorf("sales: routine company: %w", err)
	}
	today := NewEnv(w, tz).Today()
	var saleIDs []string
	err := w.Tx.NewSelect().Model((*InstallmentRow)(nil)).ColumnExpr("DISTINCT n.sale_id").
		Join("JOIN sales AS s ON s.id = n.sale_id").
		Where("n.status = ?", InstOpen).Where("n.due_date < ?", today).Where("s.canceled_at IS NULL").
		OrderExpr("n.sale_id").Scan(ctx, &saleIDs)
	if err != nil {
		return res, fmt.Errorf("sales: routine due installments: %w", err)
	}
	for _, id := range saleIDs {
		o, err := begin(ctx, w, id)
		if err != nil {
			return res, err
		}
		settle(o.s, today)
		for i := range o.s.Installments {
			if o.before.Installments[i].Status != o.s.Installments[i].Status {
				res.Installments++
			}
		}
		if _, err := o.commit(); err != nil {
			return res, err
		}
		res.Sales++
	}
	if len(saleIDs) > 0 {
		res.Companies = 1
	}
	return res, nil
}

// MarkOverdueAll runs MarkOverdue for every company with installments past
// due at now (found through workers, the cross-company role), each company
// as its own write unit of wr (the scheduler calls it every quarter hour;
// the admin API can trigger it).
func MarkOverdueAll(ctx context.Context, wr *streams.Writer, workers bun.IDB, now time.Time) (RoutineResult, error) {
	total := RoutineResult{Object: "routine_run"}
	var companies []string
	if err := workers.NewRaw("SELECT oficina_sales_overdue_companies(?)", now).Scan(ctx, &companies); err != nil {
		return total, fmt.Errorf("sales: routine companies: %w", err)
	}
	for _, c := range companies {
		var r RoutineResult
		err := wr.Run(ctx, RoutineUnit(c, now), func(ctx context.Context, w *streams.Write) error {
			var err error
			r, err = MarkOverdue(ctx, w)
			return err
		})
		if err != nil {
			return total, err
		}
		total.Companies += r.Companies
		total.Sales += r.Sales
		total.Installments += r.Installments
	}
	return total, nil
}
