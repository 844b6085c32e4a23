package recovery_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch/recovery"
	"oficina/ops/testkit"
	"oficina/schema/apitime"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// setup is a company with an endpoint, n failed deliveries of the last
// hour and a running recovery of them.
func setup(t *testing.T, n int) (*testkit.Company, *webhooks.Row, string) {
	t.Helper()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	var ep *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		ep, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/", Events: []webhooks.EventName{"*"}},
			webhooks.Subscriber{MemberID: co.Owner.ID}, func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(t), time.Now())
		return err
	})
	now := time.Now().UTC()
	for range n {
		co.LogDelivery(t, ep.ID, "client.created", streams.StatusFailed, now.Add(-30*time.Minute))
	}
	var task webhooks.WebhookRecoverTask
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		task, err = webhooks.Recover(ctx, tx, ep.ID, webhooks.WebhookRecoverRequest{Since: apitime.At(now.Add(-time.Hour))}, now)
		return err
	})
	if task.Counted != n || task.ID == nil {
		t.Fatalf("task %+v, want %d counted", task, n)
	}
	return co, ep, *task.ID
}

func task(t *testing.T, co *testkit.Company, ep, id string) webhooks.WebhookRecoverTask {
	t.Helper()
	var out webhooks.WebhookRecoverTask
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = webhooks.GetRecoverTask(ctx, tx, ep, id)
		return err
	})
	return out
}

// resends are the task's deliveries by event id.
func resends(t *testing.T, co *testkit.Company, id string) map[string]int {
	t.Helper()
	var ds []streams.Delivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&ds).Where("recover_task_id = ?", id).Scan(ctx)
	})
	out := map[string]int{}
	for _, d := range ds {
		out[d.EventID]++
	}
	return out
}

func round(t *testing.T, r *recovery.Runner) int {
	t.Helper()
	n, err := r.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 18 item 3: a recovery publishes in batches and keeps at most a
// window of its resends waiting for a first attempt, so it goes at the
// pace its receiver takes them and never floods its company's partition.
func TestRecoveryResendsInBatchesAtTheReceiversPace(t *testing.T) {
	t.Parallel()
	co, ep, id := setup(t, 7)
	r := &recovery.Runner{DB: testkit.WorkerDB(t), Only: []string{co.Company.ID}, Pace: webhooks.RecoverPace{Batch: 2, Window: 3}}
	for i, want := range []int{2, 1, 0} {
		if n := round(t, r); n != want {
			t.Errorf("round %d resent %d, want %d", i+1, n, want)
		}
	}
	// The receiver takes them: the window opens again.
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewUpdate().Model((*streams.Delivery)(nil)).Set("status = ?, attempt_count = 1", streams.StatusSucceeded).
			Where("recover_task_id = ?", id).Exec(ctx)
		return err
	})
	for round(t, r) > 0 {
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.NewUpdate().Model((*streams.Delivery)(nil)).Set("attempt_count = 1").Where("recover_task_id = ?", id).Exec(ctx)
			return err
		})
	}
	got := task(t, co, ep.ID, id)
	if got.Status != webhooks.RecoverCompleted || got.Sent != 7 || len(resends(t, co, id)) != 7 {
		t.Errorf("task %+v, want completed with 7 sent", got)
	}
}

// Issue 18 item 3: workers in several processes share the tasks (FOR
// UPDATE SKIP LOCKED) and every delivery is resent exactly once.
func TestConcurrentWorkersResendEachDeliveryOnce(t *testing.T) {
	t.Parallel()
	co, ep, id := setup(t, 40)
	var wg sync.WaitGroup
	for range 3 {
		r := &recovery.Runner{DB: testkit.WorkerDB(t), Only: []string{co.Company.ID}, Pace: webhooks.RecoverPace{Batch: 5, Window: 1000}}
		wg.Go(func() {
			for i := 0; i < 1000 && task(t, co, ep.ID, id).Status == webhooks.RecoverRunning; i++ {
				if _, err := r.RunOnce(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, per := task(t, co, ep.ID, id), resends(t, co, id)
	if got.Status != webhooks.RecoverCompleted || got.Sent != 40 || len(per) != 40 {
		t.Fatalf("task %+v, %d events resent; want completed, 40", got, len(per))
	}
	for ev, n := range per {
		if n != 1 {
			t.Errorf("event %s resent %d times", ev, n)
		}
	}
}

// Issue 18 item 3: a delivery that succeeded by other means before its
// turn is skipped, and a task whose endpoint is disabled stops.
func TestRecoverySkipsWhatSucceededAndStopsOnADisabledEndpoint(t *testing.T) {
	t.Parallel()
	co, ep, id := setup(t, 2)
	var first streams.Delivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&first).Where("endpoint_id = ?", ep.ID).Order("id").Limit(1).Scan(ctx)
	})
	co.LogResend(t, ep.ID, testkit.LoggedDelivery{EventID: first.EventID}, first.EventType, streams.StatusSucceeded, time.Now())
	r := &recovery.Runner{DB: testkit.WorkerDB(t), Only: []string{co.Company.ID}}
	if n := round(t, r); n != 1 {
		t.Errorf("resent %d, want 1", n)
	}
	if got := task(t, co, ep.ID, id); got.Sent != 1 || got.Skipped != 1 || got.Status != webhooks.RecoverCompleted {
		t.Errorf("task %+v, want 1 sent, 1 skipped, completed", got)
	}

	co2, ep2, id2 := setup(t, 3)
	co2.Write(t, func(ctx context.Context, w *streams.Write) error {
		_, err := webhooks.Disable(ctx, w, ep2.ID)
		return err
	})
	r2 := &recovery.Runner{DB: testkit.WorkerDB(t), Only: []string{co2.Company.ID}}
	if n := round(t, r2); n != 0 {
		t.Errorf("resent %d to a disabled endpoint", n)
	}
	got := task(t, co2, ep2.ID, id2)
	if got.Status != webhooks.RecoverCanceled || got.CancelReason == nil || *got.CancelReason != webhooks.ReasonEndpointDisabled {
		t.Errorf("task %+v, want canceled: endpoint_disabled", got)
	}
}
