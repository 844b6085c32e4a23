package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/streams"
)

// RecoverPace is how fast a recovery resends. Each round resends at most
// Batch deliveries of a task, and only while fewer than Window of its
// resends still wait for their first attempt: a recovery goes at the pace
// its receiver takes them, and its company's backlog on DELIVERIES (where
// the company and endpoint caps apply as to any delivery) stays small.
type RecoverPace struct {
	Batch  int // default 100
	Window int // default 200
	Tasks  int // tasks advanced per company and round; default 20
}

func (p RecoverPace) withDefaults() RecoverPace {
	if p.Batch <= 0 {
		p.Batch = 100
	}
	if p.Window <= 0 {
		p.Window = 200
	}
	if p.Tasks <= 0 {
		p.Tasks = 20
	}
	return p
}

// ReasonEndpointDisabled is the cancel_reason of a task whose endpoint was
// disabled while it ran.
const ReasonEndpointDisabled = "endpoint_disabled"

// AdvanceRecovery advances the running tasks of the transaction's company
// by one round and returns how many deliveries it resent. The tasks are
// locked with SKIP LOCKED, so workers in several processes share them;
// the resends, the items they settle and the task's counters commit
// together, so a crash repeats nothing and loses nothing (the resends are
// published after w commits, or by the relay). Call it in the company's
// write unit; w.At is the time of the round.
func AdvanceRecovery(ctx context.Context, w *streams.Write, pace RecoverPace) (int, error) {
	pace = pace.withDefaults()
	var tasks []RecoverTaskRow
	if err := w.Tx.NewSelect().Model(&tasks).Where("status = ?", RecoverRunning).Order("id").
		Limit(int64(pace.Tasks)).For("UPDATE SKIP LOCKED").Scan(ctx); err != nil {
		return 0, fmt.Errorf("webhooks: recover tasks: %w", err)
	}
	total := 0
	for i := range tasks {
		n, err := advanceTask(ctx, w, &tasks[i], pace)
		if err != nil {
			return total, fmt.Errorf("webhooks: recover task %s: %w", tasks[i].ID, err)
		}
		total += n
	}
	return total, nil
}

func advanceTask(ctx context.Context, w *streams.Write, t *RecoverTaskRow, pace RecoverPace) (int, error) {
	now := w.At
	e, err := Get(ctx, w.Tx, t.EndpointID)
	if err != nil {
		return 0, err // deleted endpoints take their tasks with them
	}
	if e.Status != StatusEnabled {
		reason := ReasonEndpointDisabled
		t.Status, t.CancelReason, t.CompletedAt = RecoverCanceled, &reason, &now
		return 0, saveTask(ctx, w.Tx, t, now)
	}
	// The resends still waiting for a first attempt are among the task's
	// newest: counted there, no index need refer to a delivery's status
	// (its outcome's update stays HOT, decision 0027).
	var waiting int
	err = w.Tx.NewRaw(`SELECT count(*) FROM (SELECT status, attempt_count FROM webhook_deliveries
		WHERE recover_task_id = ? ORDER BY id DESC LIMIT ?) r WHERE status = ? AND attempt_count = 0`,
		t.ID, 2*pace.Window, streams.StatusPending).Scan(ctx, &waiting)
	if err != nil {
		return 0, err
	}
	room := min(pace.Batch, pace.Window-int(waiting))
	if room <= 0 {
		return 0, nil
	}
	var todo []string
	if err := w.Tx.NewSelect().Table("webhook_recover_items").Column("delivery_id").Where("task_id = ?", t.ID).
		Where("done_at IS NULL").Order("delivery_id").Limit(int64(room)+1).Scan(ctx, &todo); err != nil {
		return 0, err
	}
	last := len(todo) <= room
	todo = todo[:min(len(todo), room)]
	var origs []streams.Delivery
	if len(todo) > 0 {
		if err := w.Tx.NewSelect().Model(&origs).Where("id IN (?)", bun.List(todo)).Order("id").Scan(ctx); err != nil {
			return 0, err
		}
	}
	sent := 0
	for i := range origs {
		resendID, err := resendItem(ctx, w, t, &origs[i])
		if err != nil {
			return sent, err
		}
		if resendID == "" {
			t.Skipped++
		} else {
			sent++
		}
		if _, err := w.Tx.NewRaw("UPDATE webhook_recover_items SET resend_id = ?, done_at = ? WHERE task_id = ? AND delivery_id = ?",
			nullIfEmpty(resendID), now, t.ID, origs[i].ID).Exec(ctx); err != nil {
			return sent, err
		}
	}
	// Items whose delivery is gone (the retention sweep) are settled too.
	if len(origs) < len(todo) {
		if _, err := w.Tx.NewRaw(`UPDATE webhook_recover_items SET done_at = ? WHERE task_id = ? AND done_at IS NULL
			AND delivery_id IN (?) AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = delivery_id)`,
			now, t.ID, bun.List(todo)).Exec(ctx); err != nil {
			return sent, err
		}
	}
	t.Sent += sent
	if last {
		t.Status, t.CompletedAt = RecoverCompleted, &now
	}
	return sent, saveTask(ctx, w.Tx, t, now)
}

// resendItem resends orig's event unless it was delivered, or is on its
// way, by other means since the task counted it; it returns the new
// delivery's id, or "" when skipped.
func resendItem(ctx context.Context, w *streams.Write, t *RecoverTaskRow, orig *streams.Delivery) (string, error) {
	settled, err := w.Tx.NewSelect().Model((*streams.Delivery)(nil)).Where("endpoint_id = ?", orig.EndpointID).
		Where("event_id = ?", orig.EventID).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("status = ?", streams.StatusPending).
				WhereOr("status = ? AND (created_at, id) > (?, ?)", streams.StatusSucceeded, orig.CreatedAt, orig.ID)
		}).Exists(ctx)
	if err != nil || settled {
		return "", err
	}
	d, err := streams.Resend(ctx, w, orig)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil // its event's day is past retention: skipped, as a delivery gone is
	}
	if err != nil {
		return "", err
	}
	if _, err := w.Tx.NewUpdate().Model((*streams.Delivery)(nil)).Set("recover_task_id = ?", t.ID).
		Where("id = ?", d.ID).Exec(ctx); err != nil {
		return "", err
	}
	return d.ID, nil
}

func saveTask(ctx context.Context, tx bun.IDB, t *RecoverTaskRow, now time.Time) error {
	t.UpdatedAt = now
	_, err := tx.NewUpdate().Model(t).Column("status", "sent", "skipped", "cancel_reason", "completed_at", "updated_at").
		WherePK().Exec(ctx)
	return err
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// RecoverCompanies asks the database which companies have a running
// recovery (a narrow definer function of the worker role: company ids
// only).
func RecoverCompanies(ctx context.Context, db bun.IDB, limit int) ([]string, error) {
	var out []string
	if err := db.NewRaw("SELECT oficina_recover_companies(?)", limit).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("webhooks: recover companies: %w", err)
	}
	return out, nil
}
