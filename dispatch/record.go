package dispatch

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/ids"
	"oficina/schema/mail"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// The record stage: each attempt, its delivery's new state and the
// endpoint's health, written in the cycle's transaction (cycle.go).

// ReasonFailing is the disabled_reason of an endpoint disabled by the
// dispatcher after failing for Config.DisableAfter.
const ReasonFailing = "failing"

// MailEndpointDisabled is the mail kind sent when the dispatcher disables
// an endpoint.
const MailEndpointDisabled = "webhook_endpoint_disabled"

// outcome is what handling one message decided.
type outcome struct {
	sent    bool      // an attempt was made
	ok      bool      // the attempt succeeded (2xx)
	failing bool      // the endpoint is failing after this message
	retryAt time.Time // wall-clock time of the next attempt; zero = none
	// gaveUp: the delivery failed for good; disabled: so did its
	// endpoint (told to the Observer once committed).
	gaveUp, disabled bool
}

// attemptReq is one finished attempt to record.
type attemptReq struct {
	dm      streams.DeliveryMessage
	started time.Time
	r       attemptResult
}

// recordTx writes each attempt and its delivery's new state, and the
// endpoint's health (auto-disable after DisableAfter of failures only).
// Successes, the bulk at load, are one call whatever their number and
// companies; failures, rarer, one by one, then their details in one call.
// With join, when every attempt succeeded, the successes' call is not run
// but returned (its arguments) for the cycle to send with its prepare, in
// the same statement.
func (d *Dispatcher) recordTx(ctx context.Context, tx bun.Tx, reqs []attemptReq, now time.Time, join bool) (out []batchResult[outcome], joined []any, err error) {
	if len(reqs) == 0 {
		return nil, nil, nil
	}
	out = make([]batchResult[outcome], len(reqs))
	var ok, failed []int
	for i := range reqs {
		if reqs[i].r.ok() {
			ok = append(ok, i)
		} else {
			failed = append(failed, i)
		}
	}
	args, err := succeededArgs(reqs, ok, now)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case args == nil:
	case join && len(failed) == 0:
		joined = args
	default:
		if _, err := tx.ExecContext(ctx, succeededSQL, args...); err != nil {
			return nil, nil, fmt.Errorf("record successes: %w", err)
		}
	}
	for _, i := range ok {
		out[i] = batchResult[outcome]{res: outcome{sent: true, ok: true}}
	}
	// Failures one by one (they lock the endpoint, may schedule, disable
	// and mail), companies and endpoints in id order.
	slices.SortFunc(failed, func(a, b int) int {
		return cmp.Or(cmp.Compare(reqs[a].dm.CompanyID, reqs[b].dm.CompanyID), cmp.Compare(reqs[a].dm.EndpointID, reqs[b].dm.EndpointID))
	})
	for k, i := range failed {
		if k == 0 || reqs[failed[k-1]].dm.CompanyID != reqs[i].dm.CompanyID {
			if err := tenant.Scope(ctx, tx, reqs[i].dm.CompanyID); err != nil {
				return nil, nil, err
			}
		}
		o, err := d.recordFailed(ctx, tx, reqs[i], now)
		if err != nil {
			return nil, nil, err
		}
		out[i] = batchResult[outcome]{res: o}
	}
	if err := recordDetails(ctx, tx, reqs, failed); err != nil {
		return nil, nil, err
	}
	return out, joined, nil
}

// succeededSQL records 2xx attempts, with succeededArgs: one insert per
// attempt with what it sent and got (no second write of its details), the
// deliveries and the endpoints' marks, whatever the companies.
const succeededSQL = "SELECT oficina_dispatch_succeeded(?, ?, ?, ?, ?, ?, ?, ?)"

// succeededArgs are succeededSQL's arguments for the 2xx attempts
// reqs[idx]; nil when idx is empty.
func succeededArgs(reqs []attemptReq, idx []int, now time.Time) ([]any, error) {
	if len(idx) == 0 {
		return nil, nil
	}
	// Deliveries in (company, id) order: the publish marker locks the rows
	// it marks in that order too, so the two never wait on each other in a
	// cycle (make bench's hot tenant deadlocked them).
	idx = slices.Clone(idx)
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(reqs[a].dm.CompanyID, reqs[b].dm.CompanyID), cmp.Compare(reqs[a].dm.DeliveryID, reqs[b].dm.DeliveryID))
	})
	var companies, aids, dids, eids []string
	var started []time.Time
	var codes []int
	var details []string
	for _, i := range idx {
		if reqs[i].dm.CompanyID == "" {
			return nil, tenant.ErrNoCompany
		}
		companies = append(companies, reqs[i].dm.CompanyID)
		aids = append(aids, ids.New("wha"))
		dids = append(dids, reqs[i].dm.DeliveryID)
		eids = append(eids, reqs[i].dm.EndpointID)
		started = append(started, reqs[i].started)
		codes = append(codes, reqs[i].r.status)
		b := []byte("{}")
		if reqs[i].r.detail != nil {
			var err error
			if b, err = json.Marshal(reqs[i].r.detail); err != nil {
				return nil, fmt.Errorf("attempt details: %w", err)
			}
		}
		details = append(details, string(b))
	}
	return []any{pgdialect.Array(companies), pgdialect.Array(aids), pgdialect.Array(dids), pgdialect.Array(eids),
		pgdialect.Array(started), pgdialect.Array(codes), pgdialect.Array(details), now}, nil
}

// recordFailed writes a non-2xx (or unanswered) attempt: the delivery is
// retried on the schedule, or failed when attempts are exhausted or the
// endpoint was disabled.
func (d *Dispatcher) recordFailed(ctx context.Context, tx bun.Tx, q attemptReq, now time.Time) (outcome, error) {
	out := outcome{sent: true}
	dl := new(streams.Delivery)
	if err := tx.NewSelect().Model(dl).Where("id = ?", q.dm.DeliveryID).For("UPDATE").Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		return out, err
	}
	// The row's endpoint, not the message's: the attempt's foreign key
	// is (company, endpoint, delivery) of the delivery it belongs to.
	a := &streams.Attempt{ID: ids.New("wha"), CompanyID: dl.CompanyID, DeliveryID: dl.ID, EndpointID: dl.EndpointID,
		StartedAt: q.started, FinishedAt: &now, CreatedAt: now}
	if q.r.status != 0 {
		a.ResponseStatusCode = &q.r.status
	}
	if q.r.err != "" {
		a.Error = &q.r.err
	}
	if _, err := tx.NewInsert().Model(a).Exec(ctx); err != nil {
		return out, err
	}
	dl.AttemptCount++
	dl.LastAttemptAt, dl.UpdatedAt = &q.started, now
	dl.ResponseStatusCode, dl.Error = a.ResponseStatusCode, a.Error
	err := d.failed(ctx, tx, dl, q.r, now, &out)
	return out, err
}

func saveDelivery(ctx context.Context, tx bun.Tx, dl *streams.Delivery) error {
	_, err := tx.NewUpdate().Model(dl).Column("status", "response_status_code", "error", "attempt_count",
		"last_attempt_at", "next_attempt_at", "completed_at", "updated_at").WherePK().Exec(ctx)
	return err
}

func (d *Dispatcher) failed(ctx context.Context, tx bun.Tx, dl *streams.Delivery, r attemptResult, now time.Time, out *outcome) error {
	e := new(webhooks.Row)
	if err := tx.NewSelect().Model(e).Where("id = ?", dl.EndpointID).For("UPDATE").Scan(ctx); err != nil {
		return err
	}
	out.failing = true
	if e.FailingSince == nil {
		e.FailingSince = &now
		if _, err := tx.NewUpdate().Model(e).Column("failing_since").WherePK().Exec(ctx); err != nil {
			return err
		}
	}
	disable := e.Status == "enabled" && now.Sub(*e.FailingSince) >= d.cfg.DisableAfter
	if disable {
		if err := d.disable(ctx, tx, e, now); err != nil {
			return err
		}
		out.disabled = true
	}
	delay, more := d.cfg.retryDelay(dl.AttemptCount, r.retryAfter)
	if dl.Status == streams.StatusPending {
		if more && !disable && e.Status == "enabled" {
			next := now.Add(delay)
			dl.NextAttemptAt = &next
			out.retryAt = time.Now().Add(delay) // the server fires on its wall clock
		} else {
			dl.Status, dl.CompletedAt, dl.NextAttemptAt = streams.StatusFailed, &now, nil
			out.gaveUp = true
		}
	}
	return saveDelivery(ctx, tx, dl)
}

// disable turns the endpoint off after DisableAfter of failures only and
// mails the owners and admins.
func (d *Dispatcher) disable(ctx context.Context, tx bun.Tx, e *webhooks.Row, now time.Time) error {
	_, err := tx.NewUpdate().Model((*webhooks.Row)(nil)).Set("status = 'disabled'").Set("disabled_reason = ?", ReasonFailing).
		Set("updated_at = ?", now).Where("id = ?", e.ID).Exec(ctx)
	if err != nil {
		return err
	}
	e.Status = "disabled"
	d.cfg.Logger().Warn("webhook endpoint disabled after failing", "company", e.CompanyID, "endpoint", e.ID, "since", e.FailingSince)
	body := fmt.Sprintf("O endpoint de webhook %s (%s) falhou em todas as entregas desde %s e foi desativado "+
		"(motivo: %s). Corrija o receptor e reative o endpoint; as entregas perdidas podem ser reenviadas.\n",
		e.ID, e.URL, e.FailingSince.UTC().Format(time.RFC3339), ReasonFailing)
	_, err = mail.ToManagers(ctx, tx, e.CompanyID, MailEndpointDisabled, "Webhook desativado: "+e.URL, body, now)
	return err
}
