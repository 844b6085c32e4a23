package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/streams"
)

// Bounds of a recovery (docs/api.md, "Recovering failed deliveries").
const (
	MaxRecoverWindow     = 14 * 24 * time.Hour
	MaxRecoverDeliveries = 10000
)

// RecoverTaskIDPrefix starts every recovery task id.
const RecoverTaskIDPrefix = "wrt"

// Recovery task states (dry_run only in the answer of a dry run).
const (
	RecoverDryRun    = "dry_run"
	RecoverRunning   = "running"
	RecoverCompleted = "completed"
	RecoverCanceled  = "canceled"
)

// WebhookRecoverRequest is the body of POST /webhook_endpoints/{id}/recover.
type WebhookRecoverRequest struct {
	Since  apitime.Time  `json:"since" api:"required" doc:"Start of the window (inclusive): deliveries created at or after it."`
	Until  *apitime.Time `json:"until" doc:"End of the window (exclusive); now when left out or later than now. At most 14 days after since."`
	DryRun bool          `json:"dry_run" doc:"Only count: nothing is resent and no task is created."`
}

// WebhookRecoverTaskStatus is a recovery task's state.
type WebhookRecoverTaskStatus string

// Values are the states.
func (WebhookRecoverTaskStatus) Values() []string {
	return []string{RecoverDryRun, RecoverRunning, RecoverCompleted, RecoverCanceled}
}

// WebhookRecoverTaskCancelReason is why a canceled task stopped.
type WebhookRecoverTaskCancelReason string

// Values are the reasons.
func (WebhookRecoverTaskCancelReason) Values() []string { return []string{ReasonEndpointDisabled} }

// WebhookRecoverTask is a recovery as the API returns it.
type WebhookRecoverTask struct {
	Object            string                          `json:"object" const:"webhook_recover_task"`
	ID                *string                         `json:"id" doc:"The task's id; null in a dry run."`
	WebhookEndpointID string                          `json:"webhook_endpoint_id"`
	Status            WebhookRecoverTaskStatus        `json:"status"`
	Since             apitime.Time                    `json:"since"`
	Until             apitime.Time                    `json:"until"`
	Counted           int                             `json:"counted" doc:"Deliveries of the window that failed and never later succeeded, one per event: what the task resends."`
	Sent              int                             `json:"sent" doc:"Resent so far, each as a new delivery of the same event (same event id)."`
	Skipped           int                             `json:"skipped" doc:"Not resent: the event succeeded, or was on its way, by other means before its turn."`
	CancelReason      *WebhookRecoverTaskCancelReason `json:"cancel_reason" doc:"Why a canceled task stopped; null unless canceled."`
	CreatedAt         apitime.Time                    `json:"created_at"`
	CompletedAt       *apitime.Time                   `json:"completed_at"`
}

// RecoverTaskRow is a row of webhook_recover_tasks.
type RecoverTaskRow struct {
	bun.BaseModel `bun:"table:webhook_recover_tasks"`

	ID           string     `bun:"id,pk"`
	CompanyID    string     `bun:"company_id"`
	EndpointID   string     `bun:"endpoint_id"`
	Since        time.Time  `bun:"since"`
	Until        time.Time  `bun:"until"`
	Status       string     `bun:"status"`
	Counted      int        `bun:"counted"`
	Sent         int        `bun:"sent"`
	Skipped      int        `bun:"skipped"`
	CancelReason *string    `bun:"cancel_reason"`
	CreatedAt    time.Time  `bun:"created_at"`
	UpdatedAt    time.Time  `bun:"updated_at"`
	CompletedAt  *time.Time `bun:"completed_at"`
}

// View renders the task.
func (t *RecoverTaskRow) View() WebhookRecoverTask {
	v := WebhookRecoverTask{Object: "webhook_recover_task", WebhookEndpointID: t.EndpointID,
		Status: WebhookRecoverTaskStatus(t.Status), Since: apitime.At(t.Since), Until: apitime.At(t.Until),
		Counted: t.Counted, Sent: t.Sent, Skipped: t.Skipped, CancelReason: (*WebhookRecoverTaskCancelReason)(t.CancelReason), CreatedAt: apitime.At(t.CreatedAt)}
	if t.ID != "" {
		id := t.ID
		v.ID = &id
	}
	if t.CompletedAt != nil {
		c := apitime.At(*t.CompletedAt)
		v.CompletedAt = &c
	}
	return v
}

// recoverable selects, for endpoint and the window [since, until), one
// failed delivery per event (the latest) whose event was not delivered by
// a later delivery and is not on its way (pending). Pings are not
// recovered. Its only column is the delivery id.
func recoverable(tx bun.IDB, endpointID string, since, until time.Time) *bun.SelectQuery {
	return tx.NewSelect().TableExpr("webhook_deliveries AS d").DistinctOn("d.event_id").ColumnExpr("d.id").
		Where("d.endpoint_id = ?", endpointID).Where("d.created_at >= ?", since).Where("d.created_at < ?", until).
		Where("d.status = ?", streams.StatusFailed).Where("d.kind <> ?", streams.KindPing).
		Where(`NOT EXISTS (SELECT 1 FROM webhook_deliveries AS l WHERE l.endpoint_id = d.endpoint_id
			AND l.event_id = d.event_id AND (l.status = ? OR l.status = ? AND (l.created_at, l.id) > (d.created_at, d.id)))`,
			streams.StatusPending, streams.StatusSucceeded).
		OrderExpr("d.event_id, d.created_at DESC, d.id DESC")
}

// Recover counts the endpoint's deliveries to recover in the window and,
// unless in.DryRun, starts a task that resends them (dispatch/recovery
// advances it). Order: the window (422), the endpoint (404, then 409 when
// disabled), the count's bound (422), one running task per endpoint (409).
func Recover(ctx context.Context, tx bun.IDB, endpointID string, in WebhookRecoverRequest, now time.Time) (WebhookRecoverTask, error) {
	since, until, err := recoverWindow(in, now)
	if err != nil {
		return WebhookRecoverTask{}, err
	}
	e, err := getForUpdate(ctx, tx, endpointID)
	if err != nil {
		return WebhookRecoverTask{}, err
	}
	if e.Status != StatusEnabled {
		return WebhookRecoverTask{}, apierr.New(apierr.Conflict)
	}
	n64, err := tx.NewSelect().TableExpr("(?) AS r", recoverable(tx, e.ID, since, until).Limit(MaxRecoverDeliveries+1)).Count(ctx)
	n := int(n64)
	if err != nil {
		return WebhookRecoverTask{}, fmt.Errorf("webhooks: recover count: %w", err)
	}
	if n > MaxRecoverDeliveries {
		return WebhookRecoverTask{}, apierr.Invalid("since", apierr.TooManyDeliveries)
	}
	t := &RecoverTaskRow{CompanyID: e.CompanyID, EndpointID: e.ID, Since: since, Until: until, Status: RecoverDryRun,
		Counted: n, CreatedAt: now, UpdatedAt: now}
	if in.DryRun {
		return t.View(), nil
	}
	running, err := tx.NewSelect().Model((*RecoverTaskRow)(nil)).Where("endpoint_id = ?", e.ID).
		Where("status = ?", RecoverRunning).Exists(ctx)
	if err != nil {
		return WebhookRecoverTask{}, fmt.Errorf("webhooks: recover: %w", err)
	}
	if running {
		return WebhookRecoverTask{}, apierr.New(apierr.Conflict)
	}
	t.ID, t.Status = ids.New(RecoverTaskIDPrefix), RecoverRunning
	if n == 0 {
		t.Status, t.CompletedAt = RecoverCompleted, &now
	}
	if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
		if db.IsUniqueViolation(err) {
			return WebhookRecoverTask{}, apierr.Wrap(apierr.Conflict, err)
		}
		return WebhookRecoverTask{}, fmt.Errorf("webhooks: recover: %w", err)
	}
	if n > 0 {
		_, err = tx.NewRaw("INSERT INTO webhook_recover_items (company_id, task_id, delivery_id) SELECT ?, ?, r.id FROM (?) AS r",
			e.CompanyID, t.ID, recoverable(tx, e.ID, since, until).Limit(MaxRecoverDeliveries)).Exec(ctx)
		if err != nil {
			return WebhookRecoverTask{}, fmt.Errorf("webhooks: recover items: %w", err)
		}
	}
	return t.View(), nil
}

// recoverWindow checks and completes the window of in.
func recoverWindow(in WebhookRecoverRequest, now time.Time) (time.Time, time.Time, error) {
	var f apierr.Fields
	now = now.UTC().Truncate(time.Second)
	since, until := in.Since.Time, now
	if in.Until != nil && in.Until.Before(now) {
		until = in.Until.Time
	}
	switch {
	case since.IsZero():
		f.Add("since", apierr.Required)
	case !since.Before(until):
		f.Add("until", apierr.InvalidValue)
	case until.Sub(since) > MaxRecoverWindow:
		f.Add("since", apierr.WindowTooLong)
	}
	return since, until, f.Err()
}

// GetRecoverTask reads a task of an endpoint (404 otherwise).
func GetRecoverTask(ctx context.Context, tx bun.IDB, endpointID, taskID string) (WebhookRecoverTask, error) {
	if !ids.Valid(IDPrefix, endpointID) || !ids.Valid(RecoverTaskIDPrefix, taskID) {
		return WebhookRecoverTask{}, apierr.New(apierr.ResourceNotFound)
	}
	t := new(RecoverTaskRow)
	if err := tx.NewSelect().Model(t).Where("id = ?", taskID).Where("endpoint_id = ?", endpointID).Scan(ctx); err != nil {
		return WebhookRecoverTask{}, apierr.NoRows(err)
	}
	return t.View(), nil
}

// RecoverTasks lists an endpoint's latest tasks, newest first.
func RecoverTasks(ctx context.Context, tx bun.IDB, endpointID string, limit int) ([]WebhookRecoverTask, error) {
	var ts []RecoverTaskRow
	if err := tx.NewSelect().Model(&ts).Where("endpoint_id = ?", endpointID).Order("id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("webhooks: recover tasks: %w", err)
	}
	out := make([]WebhookRecoverTask, len(ts))
	for i := range ts {
		out[i] = ts[i].View()
	}
	return out, nil
}
