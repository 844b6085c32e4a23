package dispatch_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/dispatch/destguard"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Spec 6.2: every attempt is a Standard Webhooks POST — webhook-id equal
// to the body's id, a signature the official library verifies, the fixed
// content type and user agent — and a 2xx makes the delivery succeeded.
// During a secret rotation's grace both secrets sign.
func TestDeliverySignedWithStandardWebhooksHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, got := receiver(t, status(http.StatusNoContent))
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL+"/hook", webhooks.Subscriber{MemberID: co.Owner.ID})
	var rotated *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		rotated, err = webhooks.RotateSecret(ctx, tx, ep.ID, time.Hour, func([]string) error { return nil }, testkit.Keyring(t), time.Now())
		return err
	})
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	dm := e.enqueue(t, co, ep, "sale.paid")

	r := next(t, got)
	for _, secret := range []string{rotated.ViewWithSecret().Secret, ep.ViewWithSecret().Secret} {
		if err := hooks.Verify(secret, r); err != nil {
			t.Errorf("signature with %s…: %v", secret[:10], err)
		}
	}
	if n := len(strings.Fields(r.Header.Get("webhook-signature"))); n != 2 {
		t.Errorf("signatures = %d, want 2 during the rotation grace", n)
	}
	var body struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]string{"webhook-id": dm.EventID, "content-type": "application/json",
		"user-agent": "Oficina-Webhooks/1.0"} {
		if v := r.Header.Get(h); v != want {
			t.Errorf("%s = %q, want %q", h, v, want)
		}
	}
	if body.ID != dm.EventID || string(r.Body) != string(dm.Body) {
		t.Errorf("body id %q / body changed, want the envelope of %s", body.ID, dm.EventID)
	}
	d := waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
	if d.AttemptCount != 1 || len(attempts(t, co, dm.DeliveryID)) != 1 {
		t.Errorf("attempts = %d, want 1", d.AttemptCount)
	}
}

// Spec 2.8: a non-2xx leaves the delivery pending with the answer logged,
// and the retry (same id and body, a new timestamp) succeeds.
func TestNon2xxRetriedThenSucceeded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	calls := make(chan int, 10)
	calls <- http.StatusInternalServerError
	calls <- http.StatusOK
	srv, got := receiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(<-calls) })
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	dm := e.enqueue(t, co, ep, "sale.paid")

	first, second := next(t, got), next(t, got)
	d := waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
	if first.Header.Get("webhook-id") != second.Header.Get("webhook-id") || string(first.Body) != string(second.Body) {
		t.Error("the retry must carry the same webhook-id and body")
	}
	as := attempts(t, co, dm.DeliveryID)
	if d.AttemptCount != 2 || len(as) != 2 || as[0].ResponseStatusCode == nil || *as[0].ResponseStatusCode != 500 {
		t.Fatalf("attempts = %d %+v, want 500 then 200", d.AttemptCount, as)
	}
	if ep := endpointRow(t, co, ep.ID); ep.Status != webhooks.StatusEnabled {
		t.Errorf("endpoint %s", ep.Status)
	}
}

// Spec 2.8: when the attempts are exhausted the delivery is failed, with
// the last answer logged.
func TestAttemptsExhaustedFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, _ := receiver(t, status(http.StatusBadGateway))
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Schedule: []time.Duration{time.Second, time.Second}})
	dm := e.enqueue(t, co, ep, "sale.paid")

	d := waitStatus(t, co, dm.DeliveryID, streams.StatusFailed)
	if d.AttemptCount != 3 || d.ResponseStatusCode == nil || *d.ResponseStatusCode != 502 || d.NextAttemptAt != nil {
		t.Errorf("failed delivery = %d attempts, code %v, next %v; want 3, 502, none", d.AttemptCount, d.ResponseStatusCode, d.NextAttemptAt)
	}
}

// Spec 2.8: Retry-After lengthens the wait before the next attempt (within
// bounds), read against the injected clock.
func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	calls := make(chan int, 10)
	calls <- http.StatusServiceUnavailable
	calls <- http.StatusOK
	srv, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(<-calls)
	})
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	clk := testkit.NowClock()
	e.start(t, dispatch.Config{Base: service.Base{Now: clk.Now}, Client: guardClient(t, srv, true), Schedule: []time.Duration{time.Second}})
	dm := e.enqueue(t, co, ep, "sale.paid")

	d := waitFor(t, co, dm.DeliveryID, func(d streams.Delivery) bool { return d.AttemptCount >= 1 })
	if d.Status == streams.StatusPending && (d.NextAttemptAt == nil || d.NextAttemptAt.Sub(*d.LastAttemptAt) != 3*time.Second) {
		t.Errorf("next attempt %v after %v, want 3s later (Retry-After), not the 1s schedule", d.NextAttemptAt, d.LastAttemptAt)
	}
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
}

// Spec 6.5: redirects are not followed (a 3xx is a failed attempt) and a
// certificate the client cannot verify is a failed attempt without answer.
func TestRedirectAndCertificateErrorsAreFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		trust    bool
		answer   int
		code     *int
		errStart string
	}{
		{"redirect", true, http.StatusFound, testkitPtr(302), "redirect_not_followed"},
		{"unknown certificate authority", false, http.StatusOK, nil, "tls_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			srv, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Location", "https://127.0.0.1:1/elsewhere")
				w.WriteHeader(tt.answer)
			})
			co := company(t, tenant.PlanSupra)
			ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
			e.start(t, dispatch.Config{Client: guardClient(t, srv, tt.trust), Schedule: []time.Duration{time.Hour}})
			dm := e.enqueue(t, co, ep, "sale.paid")

			d := waitFor(t, co, dm.DeliveryID, func(d streams.Delivery) bool { return d.AttemptCount == 1 })
			if d.Status != streams.StatusPending || d.Error == nil || !strings.HasPrefix(*d.Error, tt.errStart) {
				t.Errorf("delivery %s error %q, want pending with %s…", d.Status, ptrStr(d.Error), tt.errStart)
			}
			if (d.ResponseStatusCode == nil) != (tt.code == nil) || (tt.code != nil && *d.ResponseStatusCode != *tt.code) {
				t.Errorf("response_status_code %v, want %v", d.ResponseStatusCode, tt.code)
			}
		})
	}
}

func testkitPtr[T any](v T) *T { return &v }

// Spec 8: a company whose plan has no API gets its deliveries, pings too,
// failed with plan_without_api and no attempt.
func TestPlanWithoutAPIFailsDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, got := receiver(t, status(http.StatusOK))
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.UpdateCompany(ctx, tx, co.Company.ID, tenant.CompanyInput{Plan: testkitPtr(tenant.PlanFree)}, time.Now())
		return err
	})
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	for _, typ := range []string{"sale.paid", streams.PingType} {
		dm := e.enqueue(t, co, ep, typ)
		d := waitStatus(t, co, dm.DeliveryID, streams.StatusFailed)
		if ptrStr(d.Error) != dispatch.ErrPlanWithoutAPI || d.AttemptCount != 0 {
			t.Errorf("%s: error %q attempts %d, want plan_without_api and none", typ, ptrStr(d.Error), d.AttemptCount)
		}
	}
	if len(got) != 0 {
		t.Errorf("receiver got %d requests, want none", len(got))
	}
}

// Spec 6.5: destination rules are applied again at every attempt, on the
// address dialed: a receiver on a private address (loopback, not allowed
// by this dispatcher's guard) is refused, logged with the reason, and the
// delivery stays pending for its retry.
func TestPrivateDestinationRefusedAtSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, got := receiver(t, status(http.StatusOK))
	strict, err := destguard.New(destguard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	e.start(t, dispatch.Config{Client: strict.Client(), Schedule: []time.Duration{time.Hour}})
	dm := e.enqueue(t, co, ep, "sale.paid")

	d := waitFor(t, co, dm.DeliveryID, func(d streams.Delivery) bool { return d.AttemptCount == 1 })
	if d.Status != streams.StatusPending || ptrStr(d.Error) != "destination_refused: private_address" {
		t.Errorf("delivery %s error %q, want pending with destination_refused: private_address", d.Status, ptrStr(d.Error))
	}
	if len(got) != 0 {
		t.Error("the receiver must not be reached")
	}
}
