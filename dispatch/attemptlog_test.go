package dispatch_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 18: an attempt keeps what it sent and got — the request headers as
// sent (the signature, never the secret) and body, the answer's status,
// headers and body capped at 4 KiB, the duration, the trigger and the next
// attempt it scheduled — so the portal can show why a delivery failed. A
// manual resend's first attempt is manual, its retries automatic.
func TestAttemptKeepsRequestAndCappedResponse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := "\x00" + strings.Repeat("x", dispatch.BodyCap+500) // NUL: not storable as text
	calls := make(chan int, 10)
	calls <- http.StatusServiceUnavailable
	calls <- http.StatusOK
	calls <- http.StatusOK
	srv, got := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		code := <-calls
		w.Header().Set("X-Receiver", "test\xffvalue") // not UTF-8
		w.WriteHeader(code)
		if code != http.StatusOK {
			_, _ = w.Write([]byte(big))
		} else {
			_, _ = w.Write([]byte(`{"ok":true}`))
		}
	})
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL+"/hook", webhooks.Subscriber{MemberID: co.Owner.ID})
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	dm := e.enqueue(t, co, ep, "sale.paid")
	sent := next(t, got)
	next(t, got)
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)

	as := logAttempts(t, co, dm.DeliveryID)
	if len(as) != 2 {
		t.Fatalf("attempts = %d, want 2", len(as))
	}
	failed, ok := as[0], as[1]
	secret := ep.ViewWithSecret().Secret
	for k, vs := range failed.RequestHeaders {
		for _, v := range vs {
			if strings.Contains(v, strings.TrimPrefix(secret, "whsec_")) {
				t.Errorf("request header %s holds the secret", k)
			}
		}
	}
	for _, h := range []string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature", "Content-Type", "User-Agent", "Content-Length"} {
		if len(failed.RequestHeaders[h]) != 1 {
			t.Errorf("request header %s = %v, want it kept", h, failed.RequestHeaders[h])
		}
	}
	if failed.RequestHeaders["Webhook-Signature"][0] != sent.Header.Get("webhook-signature") {
		t.Errorf("kept signature %q, sent %q", failed.RequestHeaders["Webhook-Signature"], sent.Header.Get("webhook-signature"))
	}
	if failed.RequestBody == nil || *failed.RequestBody != string(dm.Body) {
		t.Errorf("request body not kept as sent")
	}
	want := "\uFFFD" + big[1:dispatch.BodyCap]
	if failed.ResponseBody == nil || *failed.ResponseBody != want || !failed.ResponseBodyTruncated {
		t.Errorf("response body of %d bytes kept as %d bytes (truncated %v), want its first %d, NUL replaced, truncated",
			len(big), lenOf(failed.ResponseBody), failed.ResponseBodyTruncated, dispatch.BodyCap)
	}
	if v := failed.ResponseHeaders["X-Receiver"]; len(v) != 1 || v[0] != "test\uFFFDvalue" {
		t.Errorf("response header X-Receiver = %q, want it kept as valid UTF-8", v)
	}
	if failed.DurationMS == nil || failed.TriggeredBy == nil || *failed.TriggeredBy != "automatic" || failed.NextAttemptAt == nil {
		t.Errorf("failed attempt: duration %v, trigger %v, next %v; want all set, automatic", failed.DurationMS, failed.TriggeredBy, failed.NextAttemptAt)
	}
	if ok.ResponseBody == nil || *ok.ResponseBody != `{"ok":true}` || ok.NextAttemptAt != nil || !ok.Succeeded() {
		t.Errorf("succeeded attempt: body %v, next %v", ok.ResponseBody, ok.NextAttemptAt)
	}

	// A manual resend: its first attempt is manual.
	var resent webhooks.WebhookDelivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		resent, err = webhooks.Resend(ctx, &streams.Write{Tx: tx, CompanyID: co.Company.ID, At: time.Now()}, ep.ID, dm.DeliveryID)
		return err
	})
	e.publish(t, streams.DeliveryMessage{DeliveryID: resent.ID, EndpointID: ep.ID, CompanyID: co.Company.ID,
		EventID: dm.EventID, EventType: dm.EventType, Kind: streams.KindResend, Body: dm.Body})
	waitStatus(t, co, resent.ID, streams.StatusSucceeded)
	if as := logAttempts(t, co, resent.ID); len(as) != 1 || as[0].TriggeredBy == nil || *as[0].TriggeredBy != "manual" {
		t.Errorf("resend attempts %+v, want one manual", as)
	}
}

func logAttempts(t *testing.T, co *testkit.Company, deliveryID string) []webhooks.AttemptRow {
	t.Helper()
	var as []webhooks.AttemptRow
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		as, err = webhooks.Attempts(ctx, tx, deliveryID)
		return err
	})
	return as
}

func lenOf(s *string) int {
	if s == nil {
		return -1
	}
	return len(*s)
}

// Issue 25 item 2, end to end: each attempt's row stores only the request
// headers that differ between attempts (timestamp and signature), and the
// log reads every header each attempt sent, with the value the receiver
// got.
func TestAnAttemptStoresOnlyTheHeadersThatDifferAndTheLogShowsThemAsSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	calls := make(chan int, 2)
	calls <- http.StatusServiceUnavailable
	calls <- http.StatusOK
	srv, got := receiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(<-calls) })
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL+"/hook", webhooks.Subscriber{MemberID: co.Owner.ID})
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Schedule: []time.Duration{time.Second}})
	dm := e.enqueue(t, co, ep, "sale.paid")
	sent := []received{next(t, got), next(t, got)}
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)

	for i, a := range attempts(t, co, dm.DeliveryID) {
		if len(a.RequestHeaders) != 2 || a.RequestHeaders["Webhook-Timestamp"] == nil || a.RequestHeaders["Webhook-Signature"] == nil {
			t.Errorf("attempt %d stores the request headers %v, want the timestamp and the signature only", i+1, a.RequestHeaders)
		}
	}
	as := logAttempts(t, co, dm.DeliveryID)
	if len(as) != 2 {
		t.Fatalf("log shows %d attempts, want 2", len(as))
	}
	for i, a := range as {
		if len(a.RequestHeaders) != 6 {
			t.Errorf("attempt %d shows %d request headers, want 6: %v", i+1, len(a.RequestHeaders), a.RequestHeaders)
		}
		for k, vs := range a.RequestHeaders {
			want := sent[i].Header.Values(k)
			if k == "Content-Length" { // the server takes it out of Header
				want = []string{strconv.Itoa(len(sent[i].Body))}
			}
			if !slices.Equal(vs, want) {
				t.Errorf("attempt %d shows %s: %q, the receiver got %q", i+1, k, vs, want)
			}
		}
	}
}
