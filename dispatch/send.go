package dispatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"oficina/dispatch/destguard"
	"oficina/schema/signing"
	"oficina/streams"
	"oficina/streams/envelope"
)

// The send stage: one signed POST to the endpoint, outside any
// transaction; what it sent and got is kept (attemptlog.go) for the record.

// attemptResult is what one HTTP attempt got.
type attemptResult struct {
	status     int            // 0 without an answer
	err        string         // reason without an answer (or for a 3xx)
	retryAfter time.Duration  // from a non-2xx answer
	detail     *attemptDetail // what was sent and got (attemptlog.go); nil without a request
	control    string         // what the answer's webhook-delivery header asks: controlDisable, controlAbort or ""
}

// SealedHeaderValue stands for a custom header's value in the attempt log.
const SealedHeaderValue = "(sealed)"

// Receiver control (issue 27 item 3, standard-webhooks#291): an answer's
// webhook-delivery header may ask to disable the endpoint, or to stop
// retrying this message. Other values are ignored.
const (
	controlHeader  = "Webhook-Delivery"
	controlDisable = "disable"
	controlAbort   = "abort-message"
)

// controlOf reads the header's request.
func controlOf(h http.Header) string {
	switch v := strings.ToLower(strings.TrimSpace(h.Get(controlHeader))); v {
	case controlDisable, controlAbort:
		return v
	}
	return ""
}

func (r attemptResult) ok() bool { return r.status >= 200 && r.status <= 299 }

// send makes one signed POST. The request's context bounds it together
// with the client's own timeout.
func (d *Dispatcher) send(ctx context.Context, dm streams.DeliveryMessage, pl plan, at time.Time) attemptResult {
	body := dm.Body
	if pl.thin {
		var err error
		if body, err = envelope.Thin(dm.Body); err != nil {
			return attemptResult{err: "invalid_body"}
		}
	}
	h, err := signing.Headers(pl.keys, dm.EventID, at, body)
	if err != nil {
		return attemptResult{err: "invalid_secret"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, pl.url, bytes.NewReader(body))
	if err != nil {
		return attemptResult{err: destguard.ReasonInvalidURL}
	}
	req.Header = h
	for k, v := range pl.headers { // names checked against ours when set (webhooks.checkHeaders)
		req.Header.Set(k, v)
	}
	if pl.oauth2 != nil {
		tok, err := d.bearer(ctx, dm.EndpointID, pl.oauth2, false)
		if err != nil {
			d.cfg.Logger().Info("webhook attempt without its OAuth2 token", "company", dm.CompanyID, "endpoint", dm.EndpointID, "err", err)
			return attemptResult{err: errToken.Error()}
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	detail := startDetail(req, dm.EventID, body)
	for k := range pl.headers {
		// The attempt log shows that it was sent, never its value: a
		// custom header is a secret of the company.
		detail.RequestHeaders[k] = []string{SealedHeaderValue}
	}
	if pl.oauth2 != nil {
		detail.RequestHeaders["Authorization"] = []string{SealedHeaderValue}
	}
	client, err := d.client(pl)
	if err != nil {
		return attemptResult{err: err.Error(), detail: detail.finish(nil)}
	}
	resp, err := client.Do(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && pl.oauth2 != nil {
		// The token may have been revoked before it expired: ask for a new
		// one, once, and send again.
		_ = resp.Body.Close()
		tok, terr := d.bearer(ctx, dm.EndpointID, pl.oauth2, true)
		if terr != nil {
			return attemptResult{err: errToken.Error(), detail: detail.finish(nil)}
		}
		again := req.Clone(ctx)
		again.Body, again.Header = io.NopCloser(bytes.NewReader(body)), req.Header.Clone()
		again.Header.Set("Authorization", "Bearer "+tok)
		resp, err = client.Do(again)
	}
	if err != nil {
		reason := destguard.Reason(err)
		d.cfg.Logger().Info("webhook attempt without answer", "company", dm.CompanyID, "endpoint", dm.EndpointID,
			"delivery", dm.DeliveryID, "reason", reason, "err", err)
		return attemptResult{err: reason, detail: detail.finish(nil)}
	}
	detail.finish(resp) // keeps the first BodyCap bytes of the body
	// Drain a little so the connection can be reused; the rest is not kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	r := attemptResult{status: resp.StatusCode, detail: detail, control: controlOf(resp.Header)}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		r.err = "redirect_not_followed"
	}
	if !r.ok() {
		r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), at)
	}
	return r
}

// client is the HTTP client of pl's send: the endpoint's own, presenting
// its client certificate, when it has one.
func (d *Dispatcher) client(pl plan) (*http.Client, error) {
	if pl.cert == nil {
		return d.cfg.Client, nil
	}
	if d.cfg.CertifiedClient == nil {
		return nil, errors.New("client_certificate_unsupported")
	}
	sum := sha256.Sum256([]byte(pl.cert.CertificatePEM + "\x00" + pl.cert.KeyPEM))
	if c, ok := d.certified.Load(sum); ok {
		return c.(*http.Client), nil
	}
	pair, err := pl.cert.TLS()
	if err != nil {
		return nil, errors.New("invalid_client_certificate")
	}
	c, _ := d.certified.LoadOrStore(sum, d.cfg.CertifiedClient(pair))
	return c.(*http.Client), nil
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
