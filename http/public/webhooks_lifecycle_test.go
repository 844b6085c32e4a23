package public_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Spec 6.6 / 3.3: editing the URL or events, or re-enabling, makes the
// editor the subscriber (and needs module reads); a description change
// does not.
func TestEditorBecomesTheSubscriber(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	admin := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleAdmin)})
	owner := co.Key(t, co.Owner, webhookPerms...)
	other := co.Key(t, admin, webhookPerms...)
	id := mustEndpoint(t, api, owner.Secret, "sale.*")
	path := "/webhook_endpoints/" + id
	sub := func(r *httpkit.Response) string {
		return r.Body["subscriber_member_id"].(string) + " " + r.Body["subscriber_api_key_id"].(string)
	}
	r := api.Do(t, httpkit.Req{Method: "PATCH", Path: path, Key: other.Secret, Body: map[string]any{"description": "new", "events": []string{"sale.*"}}})
	if r.Status != 200 || r.Body["description"] != "new" || sub(r) != co.Owner.ID+" "+owner.ID {
		t.Fatalf("description only: %d %s", r.Status, r.Raw)
	}
	noSales := co.Key(t, admin, "webhooks:update", "clients:read")
	if r := api.Do(t, httpkit.Req{Method: "PATCH", Path: path, Key: noSales.Secret, Body: map[string]any{"url": "https://other.example.net/x"}}); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Fatalf("URL change without sales:read: %d %s", r.Status, r.Raw)
	}
	r = api.Do(t, httpkit.Req{Method: "PATCH", Path: path, Key: other.Secret, Body: map[string]any{"events": []string{"sale.paid"}}})
	if r.Status != 200 || sub(r) != admin.ID+" "+other.ID {
		t.Fatalf("events change: %d %s", r.Status, r.Raw)
	}
	r = api.Do(t, httpkit.Req{Method: "PATCH", Path: path, Key: owner.Secret, Body: map[string]any{"url": "https://other.example.net/x"}})
	if r.Status != 200 || r.Body["url"] != "https://other.example.net/x" || sub(r) != co.Owner.ID+" "+owner.ID {
		t.Fatalf("URL change: %d %s", r.Status, r.Raw)
	}
	for _, bad := range []map[string]any{{"url": "http://other.example.net/x"}, {"url": nil}, {"events": []string{"*", "sale.paid"}}, {"secret": "x"}} {
		if r := api.Do(t, httpkit.Req{Method: "PATCH", Path: path, Key: owner.Secret, Body: bad}); r.Status != 422 {
			t.Errorf("%v: %d %s", bad, r.Status, r.Raw)
		}
	}
	r = api.Do(t, httpkit.Req{Method: "POST", Path: path + "/disable", Key: owner.Secret})
	if r.Status != 200 || r.Body["status"] != "disabled" || r.Body["disabled_reason"] != "manual" {
		t.Fatalf("disable: %d %s", r.Status, r.Raw)
	}
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: path + "/enable", Key: noSales.Secret}); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Fatalf("re-enable without sales:read: %d %s", r.Status, r.Raw)
	}
	r = api.Do(t, httpkit.Req{Method: "POST", Path: path + "/enable", Key: other.Secret})
	if r.Status != 200 || r.Body["status"] != "enabled" || r.Body["disabled_reason"] != nil || sub(r) != admin.ID+" "+other.ID {
		t.Fatalf("re-enable: %d %s", r.Status, r.Raw)
	}
}

// Spec 4.6: ping answers 202 with no body and sends a real ping event to
// that endpoint only; a disabled endpoint gives 409.
func TestPingWebhookEndpoint(t *testing.T) {
	t.Parallel()
	api, js := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	id := mustEndpoint(t, api, key, "client.created")
	mustEndpoint(t, api, key, "*")
	r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/ping", Key: key})
	if r.Status != 202 || len(r.Raw) != 0 {
		t.Fatalf("ping: %d %q", r.Status, r.Raw)
	}
	var ds []streams.Delivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error { return tx.NewSelect().Model(&ds).Scan(ctx) })
	if len(ds) != 1 || ds[0].EndpointID != id || ds[0].EventType != "ping" {
		t.Fatalf("deliveries %+v", ds)
	}
	// Published after commit without holding the answer (decision 0022).
	s, _ := js.Stream(context.Background(), "DELIVERIES")
	testkit.Eventually(t, "the ping's delivery to be published", func() bool {
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 1
	})
	api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/disable", Key: key})
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/ping", Key: key}); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Fatalf("ping disabled: %d %s", r.Status, r.Raw)
	}
}

// rotate_secret returns a new secret; the previous one keeps signing for
// the grace period (default 24 h, 0 = stop now, at most 7 days).
func TestRotateWebhookSecret(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	created := createEndpoint(t, api, key, "*")
	path := "/webhook_endpoints/" + created.Body["id"].(string) + "/rotate_secret"
	r := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key})
	if r.Status != 200 || r.Body["secret"] == created.Body["secret"] || r.Body["secret"] == nil || r.Body["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate: %d %s", r.Status, r.Raw)
	}
	r = api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"grace_period_seconds": 0}})
	if r.Status != 200 || r.Body["previous_secret_expires_at"] != nil {
		t.Fatalf("rotate, stop now: %d %s", r.Status, r.Raw)
	}
	for _, g := range []int64{-1, 604801} {
		if r := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"grace_period_seconds": g}}); r.Status != 422 || param(r) != "grace_period_seconds out_of_range" {
			t.Errorf("grace %d: %d %s", g, r.Status, r.Raw)
		}
	}
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: co.OwnerKey(t, "webhooks:update", "sales:read")}); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Fatalf("rotate without every module read: %d %s", r.Status, r.Raw)
	}
}

// Spec 2.8: the delivery log lists entries newest first with event_type,
// status, response_status_code (non-2xx) and error; a manual resend is a
// new delivery of the same event id; a disabled endpoint refuses it (409).
func TestDeliveryLogAndResend(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	id := mustEndpoint(t, api, key, "sale.*")
	w := &streams.Write{CompanyID: co.Company.ID, Actor: streams.Actor{Kind: streams.ActorDashboard}, At: time.Now()}
	var first streams.Recorded
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		w.Tx = tx
		rs, err := streams.Record(ctx, w, streams.Change{Type: "sale.created", Object: map[string]any{"object": "sale", "id": "sal_1"}})
		if err != nil {
			return err
		}
		first = rs[0]
		// What the dispatcher records after a 500 answer.
		_, err = tx.NewUpdate().Model((*streams.Delivery)(nil)).Set("attempt_count = 1, response_status_code = 500, last_attempt_at = now()").
			Where("id = ?", rs[0].Deliveries[0].ID).Exec(ctx)
		return err
	})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		w.Tx = tx
		_, err := streams.Record(ctx, w, streams.Change{Type: "sale.paid", Object: map[string]any{"object": "sale", "id": "sal_1"}})
		return err
	})
	log := api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + id + "/deliveries?limit=10", Key: key})
	data, _ := log.Body["data"].([]any)
	if log.Status != 200 || log.Body["object"] != "list" || len(data) != 2 {
		t.Fatalf("log: %d %s", log.Status, log.Raw)
	}
	newest, oldest := data[0].(map[string]any), data[1].(map[string]any)
	if newest["event_type"] != "sale.paid" || newest["status"] != "pending" || newest["response_status_code"] != nil ||
		oldest["event_type"] != "sale.created" || oldest["response_status_code"] != 500.0 || oldest["attempts"] != 1.0 ||
		oldest["event_id"] != first.ID || oldest["object"] != "webhook_delivery" {
		t.Fatalf("entries %s", log.Raw)
	}
	resend := "/webhook_endpoints/" + id + "/deliveries/" + oldest["id"].(string) + "/resend"
	r := api.Do(t, httpkit.Req{Method: "POST", Path: resend, Key: key})
	if r.Status != 202 || r.Body["event_id"] != first.ID || r.Body["resend_of"] != oldest["id"] || r.Body["status"] != "pending" || r.Body["id"] == oldest["id"] {
		t.Fatalf("resend: %d %s", r.Status, r.Raw)
	}
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/deliveries/dlv_00000000000000000000000000/resend", Key: key}); r.Status != 404 {
		t.Fatalf("unknown delivery: %d", r.Status)
	}
	api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/disable", Key: key})
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: resend, Key: key}); r.Status != 409 {
		t.Fatalf("resend to a disabled endpoint: %d %s", r.Status, r.Raw)
	}
	del := api.Do(t, httpkit.Req{Method: "DELETE", Path: "/webhook_endpoints/" + id, Key: key})
	if del.Status != 200 || del.Body["deleted"] != true || del.Body["id"] != id {
		t.Fatalf("delete: %d %s", del.Status, del.Raw)
	}
	if r := api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + id + "/deliveries", Key: key}); r.Status != 404 {
		t.Fatalf("log after delete: %d", r.Status)
	}
}

// Spec 4.1: an idempotent replay of endpoint creation returns the endpoint
// without secret, and creates nothing again.
func TestIdempotentCreateReplaysWithoutSecret(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	req := httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key, Header: map[string]string{"Idempotency-Key": "create-1"},
		Body: map[string]any{"url": hookURL, "events": []string{"*"}}}
	first, again := api.Do(t, req), api.Do(t, req)
	if first.Status != 201 || first.Body["secret"] == nil {
		t.Fatalf("first: %d %s", first.Status, first.Raw)
	}
	if again.Status != 201 || again.Body["id"] != first.Body["id"] || again.Body["secret"] != nil {
		t.Fatalf("replay: %d %s", again.Status, again.Raw)
	}
	list := api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints", Key: key})
	if n := len(list.Body["data"].([]any)); n != 1 {
		t.Fatalf("%d endpoints", n)
	}
}

// Spec 4.1 and 2.8: a rotation retried with the same Idempotency-Key
// answers the endpoint without the new secret (as a replayed creation
// does), rotates once, and no secret is stored in idempotency_records.
func TestIdempotentRotateSecretReplaysWithoutSecret(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	create := httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key, Header: map[string]string{"Idempotency-Key": "create-1"},
		Body: map[string]any{"url": hookURL, "events": []string{"*"}}}
	created := api.Do(t, create)
	id := created.Body["id"].(string)
	for _, body := range []any{nil, map[string]any{"grace_period_seconds": 0}} {
		req := httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/rotate_secret", Key: key, Body: body,
			Header: map[string]string{"Idempotency-Key": fmt.Sprintf("rotate-%v", body)}}
		first, again := api.Do(t, req), api.Do(t, req)
		secret, _ := first.Body["secret"].(string)
		if first.Status != 200 || !strings.HasPrefix(secret, "whsec_") || secret == created.Body["secret"] {
			t.Fatalf("first: %d %s", first.Status, first.Raw)
		}
		if again.Status != 200 || again.Header.Get("Idempotent-Replayed") != "true" || again.Body["id"] != id || again.Body["secret"] != nil {
			t.Fatalf("replay: %d %s", again.Status, again.Raw)
		}
		var current *webhooks.Row
		co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
			current, err = webhooks.Get(ctx, tx, id)
			return err
		})
		if s, err := current.SealedSecrets.Open(testkit.Keyring(t), current.CompanyID, current.ID); err != nil || s.Current != secret {
			t.Fatalf("the replay rotated again (%v)", err)
		}
	}
	var stored []string
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT convert_from(body, 'UTF8') FROM idempotency_records").Scan(ctx, &stored)
	})
	if len(stored) != 3 {
		t.Fatalf("%d records", len(stored))
	}
	for _, b := range stored {
		if strings.Contains(b, "whsec_") || strings.Contains(b, `"secret"`) {
			t.Fatalf("a secret is stored with the idempotency record: %s", b)
		}
	}
}
