package sales_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/sales"
	"oficina/streams"
	"oficina/tenant"
)

// 6.3 rule 5: the daily routine marks what is past due in the company's
// time zone: an installment due on 2030-01-10 in São Paulo (UTC−3) is not
// overdue at 2030-01-11 02:00 UTC (still the 10th there) and is at 03:30
// UTC; the cross-company query agrees, and the events are summarized.
func TestOverdueRoutineFollowsTheCompanyTimeZone(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{Timezone: testkit.Ptr("America/Sao_Paulo")})
	var id string
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		w := &streams.Write{Tx: tx, CompanyID: co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: time.Now()}
		s, err := sales.Create(ctx, w, sales.SaleCreate{
			Items:       []sales.SaleItemInput{{Type: sales.ItemCustom, Name: new("x"), UnitPriceCents: new(int64(1000))}},
			PaymentPlan: &sales.PaymentPlanInput{Mode: sales.ModeInstallments, Installments: []sales.PaymentPlanInstallmentInput{{AmountCents: new(int64(1000)), DueDate: day(9)}}},
		}, sales.CreateOptions{})
		if err == nil {
			id = s.ID
		}
		return err
	})
	before := time.Date(2030, 1, 11, 2, 0, 0, 0, time.UTC)
	after := time.Date(2030, 1, 11, 3, 30, 0, 0, time.UTC)
	due := func(now time.Time) bool {
		var companies []string
		if err := testkit.WorkerDB(t).NewRaw("SELECT oficina_sales_overdue_companies(?)", now).Scan(context.Background(), &companies); err != nil {
			t.Fatal(err)
		}
		return slices.Contains(companies, co.Company.ID)
	}
	pub := &testkit.Publisher{}
	wr := &streams.Writer{DB: co.DB, Publisher: pub}
	run := func(now time.Time) sales.RoutineResult {
		var r sales.RoutineResult
		err := wr.Run(context.Background(), sales.RoutineUnit(co.Company.ID, now), func(ctx context.Context, w *streams.Write) error {
			var err error
			r, err = sales.MarkOverdue(ctx, w)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if due(before) || run(before).Sales != 0 {
		t.Fatal("overdue before the day ended in the company's time zone")
	}
	if !due(after) {
		t.Fatal("cross-company query misses the company")
	}
	if r := run(after); r.Sales != 1 || r.Installments != 1 {
		t.Fatalf("routine: %+v", r)
	}
	if due(after) || run(after).Sales != 0 {
		t.Error("second run marked again")
	}
	var s *sales.Row
	var events []streams.OutboxEvent
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if s, err = sales.Load(ctx, tx, id, sales.LoadOptions{}); err != nil {
			return err
		}
		return tx.NewSelect().Model(&events).Where("type = ?", sales.EventUpdated).Scan(ctx)
	})
	if !s.Overdue || s.Installments[0].Status != sales.InstOverdue {
		t.Errorf("sale after the routine: overdue %v, installment %s", s.Overdue, s.Installments[0].Status)
	}
	if len(events) != 1 || !strings.Contains(string(events[0].Body), `"object_truncated":true`) {
		t.Errorf("routine events: %d", len(events))
	}
	// Its write unit hands them to the publisher after commit: they do not
	// wait for the relay.
	if got := pub.Events(); len(got) != 1 || got[0].Type != sales.EventUpdated {
		t.Errorf("published after commit: %+v, want the one sale.updated", got)
	}
}
