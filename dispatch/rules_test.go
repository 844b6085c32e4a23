package dispatch_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Spec 3.3: before each send the subscriber's access is checked. A lost
// module fails that module's deliveries with subscriber_access_lost (no
// attempt) while other modules still arrive; the endpoint stays enabled;
// owners and admins get one e-mail per loss — again only after a success
// and a new loss.
func TestSubscriberAccessLostOneEmailAndRegained(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, got := receiver(t, status(http.StatusOK))
	co := company(t, tenant.PlanSupra)
	seller := co.Member(t, tenant.MemberInput{Role: testkitPtr(tenant.RoleMember), Type: testkitPtr(tenant.TypeSeller),
		Permissions: &tenant.MemberPermissions{"sales": {"read"}}})
	key := co.Key(t, seller, "sales:read", "clients:read")
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: seller.ID, KeyID: key.ID})
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	setStatus := func(s string) {
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			_, err := tenant.UpdateMember(ctx, tx, seller.ID, tenant.MemberInput{Status: &s}, time.Now())
			return err
		})
	}
	lost := func(typ string) {
		t.Helper()
		dm := e.enqueue(t, co, ep, typ)
		d := waitStatus(t, co, dm.DeliveryID, streams.StatusFailed)
		if ptrStr(d.Error) != dispatch.ErrSubscriberAccessLost || d.AttemptCount != 0 {
			t.Errorf("%s: error %q attempts %d, want subscriber_access_lost and none", typ, ptrStr(d.Error), d.AttemptCount)
		}
	}
	arrives := func(typ string) {
		t.Helper()
		dm := e.enqueue(t, co, ep, typ)
		if r := next(t, got); r.Header.Get("webhook-id") != dm.EventID {
			t.Fatalf("receiver got %s, want %s", r.Header.Get("webhook-id"), dm.EventID)
		}
		waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
	}

	lost("client.created") // the member cannot read clients
	arrives("sale.paid")   // sales still arrive
	if n := len(co.Mails(t, dispatch.MailAccessLost)); n != 1 {
		t.Fatalf("mails after first loss = %d, want 1", n)
	}
	setStatus("suspended")
	lost("sale.paid")
	lost("sale.created")
	if n := len(co.Mails(t, dispatch.MailAccessLost)); n != 2 {
		t.Fatalf("mails = %d, want 2: one for the new loss after the sale's success, not one per delivery", n)
	}
	if ep := endpointRow(t, co, ep.ID); ep.Status != webhooks.StatusEnabled {
		t.Errorf("endpoint %s, want enabled", ep.Status)
	}
	setStatus("active")
	arrives("sale.paid") // regained; the success re-arms the e-mail
	setStatus("suspended")
	lost("sale.paid")
	if n := len(co.Mails(t, dispatch.MailAccessLost)); n != 3 {
		t.Errorf("mails after a success and a new loss = %d, want 3", n)
	}
}

// Spec 3.3: an endpoint that only fails for 3 days is disabled and the
// owners and admins are mailed; its delivery is failed. The clock is
// injected: each attempt happens a day later.
func TestEndpointDisabledAfterThreeDaysOfFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clk := testkit.NowClock()
	srv, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		clk.Advance(25 * time.Hour)
		w.WriteHeader(http.StatusInternalServerError)
	})
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	sched := []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second, time.Second}
	e.start(t, dispatch.Config{Base: service.Base{Now: clk.Now}, Client: guardClient(t, srv, true), Schedule: sched})
	dm := e.enqueue(t, co, ep, "sale.paid")

	d := waitStatus(t, co, dm.DeliveryID, streams.StatusFailed)
	// Recorded at +25h (failing since), +50h, +75h, +100h: 75h ≥ 72h.
	if d.AttemptCount != 4 {
		t.Errorf("attempts = %d, want 4 (disabled once failing for 3 days)", d.AttemptCount)
	}
	got := endpointRow(t, co, ep.ID)
	if got.Status != webhooks.StatusDisabled || got.DisabledReason == nil || *got.DisabledReason != dispatch.ReasonFailing {
		t.Errorf("endpoint %s (%v), want disabled (failing)", got.Status, got.DisabledReason)
	}
	if n := len(co.Mails(t, dispatch.MailEndpointDisabled)); n != 1 {
		t.Errorf("disable mails = %d, want 1", n)
	}
	// A disabled endpoint's deliveries are failed without an attempt.
	dm2 := e.enqueue(t, co, ep, "sale.paid")
	d2 := waitStatus(t, co, dm2.DeliveryID, streams.StatusFailed)
	if ptrStr(d2.Error) != dispatch.ErrEndpointDisabled || d2.AttemptCount != 0 {
		t.Errorf("delivery to disabled endpoint: %q, %d attempts", ptrStr(d2.Error), d2.AttemptCount)
	}
}
