package dispatch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch/destguard"
	"oficina/schema/mail"
	"oficina/schema/signing"
	"oficina/streams"
)

// Mail kinds sent by the dispatcher.
const (
	MailAccessLost       = "webhook_subscriber_access_lost"
	MailEndpointDisabled = "webhook_endpoint_disabled"
)

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

// plan is what prepare found: what to send, or nothing. keys are the
// opened secrets' HMAC keys; none when they could not be opened (the
// attempt then fails without a request).
type plan struct {
	send    bool
	url     string
	keys    [][]byte
	failing bool
	closed  string // why the delivery was closed without an attempt, if it was
}

// closeDelivery fails a pending delivery without an attempt.
func closeDelivery(ctx context.Context, tx bun.Tx, id, reason string, now time.Time) error {
	_, err := tx.NewUpdate().Model((*streams.Delivery)(nil)).Set("status = ?", streams.StatusFailed).
		Set("error = ?", reason).Set("completed_at = ?", now).Set("next_attempt_at = NULL").
		Set("updated_at = ?", now).Where("id = ?", id).Where("status = ?", streams.StatusPending).Exec(ctx)
	return err
}

// accessLost closes the delivery and, once per loss, mails the owners and
// admins; the flag is cleared by the next successful delivery.
func (d *Dispatcher) accessLost(ctx context.Context, tx bun.Tx, e *endpoint, dm streams.DeliveryMessage, now time.Time) error {
	if err := closeDelivery(ctx, tx, dm.DeliveryID, ErrSubscriberAccessLost, now); err != nil {
		return err
	}
	res, err := tx.NewUpdate().Model((*endpoint)(nil)).Set("access_lost_notified_at = ?", now).
		Where("id = ?", e.ID).Where("access_lost_notified_at IS NULL").Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	d.cfg.Log.Warn("webhook subscriber lost access", "company", e.CompanyID, "endpoint", e.ID, "event_type", dm.EventType)
	body := fmt.Sprintf("O assinante do endpoint de webhook %s (%s) perdeu o acesso aos eventos %q.\n"+
		"As entregas afetadas foram encerradas com o erro %s; o endpoint continua ativo e os eventos "+
		"de outros módulos continuam chegando. Restaure a permissão ou edite o endpoint.\n",
		e.ID, e.URL, dm.EventType, ErrSubscriberAccessLost)
	_, err = mail.ToManagers(ctx, tx, e.CompanyID, MailAccessLost, "Webhook: assinante sem acesso", body, now)
	return err
}

// attemptResult is what one HTTP attempt got.
type attemptResult struct {
	status     int            // 0 without an answer
	err        string         // reason without an answer (or for a 3xx)
	retryAfter time.Duration  // from a non-2xx answer
	detail     *attemptDetail // what was sent and got (attemptlog.go); nil without a request
}

func (r attemptResult) ok() bool { return r.status >= 200 && r.status <= 299 }

// send makes one signed POST. The request's context bounds it together
// with the client's own timeout.
func (d *Dispatcher) send(ctx context.Context, dm streams.DeliveryMessage, pl plan, at time.Time) attemptResult {
	h, err := signing.Headers(pl.keys, dm.EventID, at, dm.Body)
	if err != nil {
		return attemptResult{err: "invalid_secret"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, pl.url, bytes.NewReader(dm.Body))
	if err != nil {
		return attemptResult{err: destguard.ReasonInvalidURL}
	}
	req.Header = h
	detail := startDetail(req, dm.Body)
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		reason := destguard.Reason(err)
		d.cfg.Log.Info("webhook attempt without answer", "company", dm.CompanyID, "endpoint", dm.EndpointID,
			"delivery", dm.DeliveryID, "reason", reason, "err", err)
		return attemptResult{err: reason, detail: detail.finish(nil)}
	}
	detail.finish(resp) // keeps the first BodyCap bytes of the body
	// Drain a little so the connection can be reused; the rest is not kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	r := attemptResult{status: resp.StatusCode, detail: detail}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		r.err = "redirect_not_followed"
	}
	if !r.ok() {
		r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), at)
	}
	return r
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func saveDelivery(ctx context.Context, tx bun.Tx, dl *streams.Delivery) error {
	_, err := tx.NewUpdate().Model(dl).Column("status", "response_status_code", "error", "attempt_count",
		"last_attempt_at", "next_attempt_at", "completed_at", "updated_at").WherePK().Exec(ctx)
	return err
}

func (d *Dispatcher) failed(ctx context.Context, tx bun.Tx, dl *streams.Delivery, r attemptResult, now time.Time, out *outcome) error {
	e := new(endpoint)
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
func (d *Dispatcher) disable(ctx context.Context, tx bun.Tx, e *endpoint, now time.Time) error {
	_, err := tx.NewUpdate().Model((*endpoint)(nil)).Set("status = 'disabled'").Set("disabled_reason = ?", ReasonFailing).
		Set("updated_at = ?", now).Where("id = ?", e.ID).Exec(ctx)
	if err != nil {
		return err
	}
	e.Status = "disabled"
	d.cfg.Log.Warn("webhook endpoint disabled after failing", "company", e.CompanyID, "endpoint", e.ID, "since", e.FailingSince)
	body := fmt.Sprintf("O endpoint de webhook %s (%s) falhou em todas as entregas desde %s e foi desativado "+
		"(motivo: %s). Corrija o receptor e reative o endpoint; as entregas perdidas podem ser reenviadas.\n",
		e.ID, e.URL, e.FailingSince.UTC().Format(time.RFC3339), ReasonFailing)
	_, err = mail.ToManagers(ctx, tx, e.CompanyID, MailEndpointDisabled, "Webhook desativado: "+e.URL, body, now)
	return err
}
