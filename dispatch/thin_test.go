package dispatch_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/schema/field"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 26 item 3: an endpoint with the thin payload receives data.object
// as {object, id} — signed over the thin body, which the Standard Webhooks
// library verifies — while the log keeps the full envelope.
func TestThinEndpointsReceiveObjectAndIDSignedOverWhatTheyGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, got := receiver(t, status(http.StatusNoContent))
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL+"/hook", webhooks.Subscriber{MemberID: co.Owner.ID})
	secret := ep.ViewWithSecret().Secret // shown on creation only
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		ep, err = webhooks.Update(ctx, tx, ep.ID, webhooks.WebhookEndpointUpdate{
			Payload: field.Opt[webhooks.WebhookPayload]{Set: true, Value: webhooks.PayloadThin}},
			webhooks.Subscriber{MemberID: co.Owner.ID}, func([]string) error { return nil }, nil, testkit.Keyring(t), ep.UpdatedAt)
		return err
	})
	if ep.View().Payload != webhooks.PayloadThin {
		t.Fatalf("payload %q after the update", ep.View().Payload)
	}
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	dm := e.enqueue(t, co, ep, "sale.paid")

	r := next(t, got)
	if err := hooks.Verify(secret, r); err != nil {
		t.Fatalf("the thin body does not verify: %v", err)
	}
	var body struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			Object map[string]any `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.ID != dm.EventID || body.Type != "sale.paid" || len(body.Data.Object) != 2 ||
		body.Data.Object["object"] != "sale" || body.Data.Object["id"] != "sale_test" {
		t.Errorf("thin body %s, want the event with data.object {object, id}", r.Body)
	}
	if string(r.Body) == string(dm.Body) {
		t.Error("the endpoint received the full envelope")
	}
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
}
