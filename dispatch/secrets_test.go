package dispatch_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/schema/secretbox"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Key rotation end to end: after a rekey under a new key, with the old key
// dropped from the dispatcher's ring, deliveries are still signed with the
// endpoint's secrets — the current and, during its grace, the previous one
// — and verify with the Standard Webhooks library.
func TestDeliveriesVerifyWithStandardWebhooksAfterRekey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, got := receiver(t, status(http.StatusNoContent))
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL+"/hook", webhooks.Subscriber{MemberID: co.Owner.ID})
	var rotated *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
		rotated, err = webhooks.RotateSecret(ctx, tx, ep.ID, time.Hour, func([]string) error { return nil }, testkit.Keyring(t), time.Now())
		return err
	})
	entry := testkit.NewKeyEntry(t, "k2")
	two, err := secretbox.ParseKeyring(entry + "," + testkit.SecretKeys)
	if err != nil {
		t.Fatal(err)
	}
	res, err := webhooks.Reseal(context.Background(), co.DB, webhooks.ResealOptions{Ring: two, Companies: []string{co.Company.ID}})
	if err != nil || res.Endpoints != 1 {
		t.Fatalf("rekey: %+v, %v", res, err)
	}
	onlyNew, err := secretbox.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Secrets: onlyNew})
	dm := e.enqueue(t, co, ep, "sale.paid")

	r := next(t, got)
	for _, secret := range []string{rotated.ViewWithSecret().Secret, ep.ViewWithSecret().Secret} {
		if err := hooks.Verify(secret, r); err != nil {
			t.Errorf("signature with the secret %s…: %v", secret[:10], err)
		}
	}
	if n := len(strings.Fields(r.Header.Get("webhook-signature"))); n != 2 {
		t.Errorf("signatures = %d, want 2 during the rotation grace", n)
	}
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
}

// A secret the dispatcher cannot open — sealed under a key its ring lacks,
// or copied from another row — is never used: the attempt fails with
// invalid_secret before any request (and is retried on the schedule, so
// putting the key back saves it); nothing panics, nothing is sent unsigned
// or signed with the stored bytes.
func TestUnopenableSecretFailsTheAttemptWithoutARequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, got := receiver(t, status(http.StatusOK))
	co := company(t, tenant.PlanSupra)
	sub := webhooks.Subscriber{MemberID: co.Owner.ID}
	unknown := newEndpointWith(t, co, srv.URL+"/unknown", sub, mustRing(t, testkit.NewKeyEntry(t, "gone")))
	source, moved := newEndpoint(t, co, srv.URL+"/source", sub), newEndpoint(t, co, srv.URL+"/moved", sub)
	if _, err := testkit.OwnerDB(t).ExecContext(context.Background(),
		"UPDATE webhook_endpoints d SET sealed_secret = s.sealed_secret FROM webhook_endpoints s WHERE s.id = ? AND d.id = ?",
		source.ID, moved.ID); err != nil {
		t.Fatal(err)
	}
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Schedule: []time.Duration{time.Hour}})
	for name, ep := range map[string]*webhooks.Row{"unknown key": unknown, "moved secret": moved} {
		dm := e.enqueue(t, co, ep, "sale.paid")
		d := waitFor(t, co, dm.DeliveryID, func(d streams.Delivery) bool { return d.AttemptCount == 1 })
		if d.Status != streams.StatusPending || ptrStr(d.Error) != "invalid_secret" || d.ResponseStatusCode != nil {
			t.Errorf("%s: %s, error %s, code %v; want pending, invalid_secret, no answer", name, d.Status, ptrStr(d.Error), d.ResponseStatusCode)
		}
	}
	// The source endpoint still delivers, and is all the receiver saw.
	dm := e.enqueue(t, co, source, "sale.paid")
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
	r := next(t, got)
	select {
	case extra := <-got:
		t.Fatalf("the receiver got a request for %s", extra.Header.Get("webhook-id"))
	default:
	}
	if r.Header.Get("webhook-id") != dm.EventID {
		t.Fatalf("the receiver got %s, want the source's %s", r.Header.Get("webhook-id"), dm.EventID)
	}
}

func mustRing(t *testing.T, text string) *secretbox.Keyring {
	t.Helper()
	r, err := secretbox.ParseKeyring(text)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newEndpointWith is newEndpoint sealing under ring.
func newEndpointWith(t *testing.T, co *testkit.Company, url string, sub webhooks.Subscriber, ring *secretbox.Keyring) *webhooks.Row {
	t.Helper()
	var ep *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
		ep, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: url, Events: []webhooks.EventName{"*"}}, sub,
			func([]string) error { return nil }, testkit.AnyURL{}, ring, time.Now())
		return err
	})
	return ep
}
