package public_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch/recovery"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/apitime"
	"oficina/streams"
	"oficina/tenant"
)

func ts(t time.Time) string { return apitime.At(t).String() }

// Issue 18 item 3: recover resends every delivery of the window that failed
// and never later succeeded — one per event, with the same event id, as a
// new delivery (kind resend) — and nothing else: not a delivered event, not
// one on its way, not one outside the window, not a ping. A dry run only
// counts; the task's progress is read back; a second running task is 409.
func TestRecoverResendsWhatFailedAndNeverLaterSucceeded(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	ep := mustEndpoint(t, api, key, "*")
	now := time.Now().UTC()
	failed := co.LogDelivery(t, ep, "client.created", streams.StatusFailed, now.Add(-5*time.Hour))
	healed := co.LogDelivery(t, ep, "client.updated", streams.StatusFailed, now.Add(-4*time.Hour))
	co.LogResend(t, ep, healed, "client.updated", streams.StatusSucceeded, now.Add(-3*time.Hour))
	co.LogDelivery(t, ep, "client.created", streams.StatusSucceeded, now.Add(-3*time.Hour))
	co.LogDelivery(t, ep, "client.created", streams.StatusPending, now.Add(-3*time.Hour))
	twice := co.LogDelivery(t, ep, "client.deleted", streams.StatusFailed, now.Add(-2*time.Hour))
	co.LogResend(t, ep, twice, "client.deleted", streams.StatusFailed, now.Add(-time.Hour))
	co.LogDelivery(t, ep, "client.created", streams.StatusFailed, now.Add(-48*time.Hour)) // outside the window
	co.LogDelivery(t, ep, streams.PingType, streams.StatusFailed, now.Add(-time.Hour))

	path := "/webhook_endpoints/" + ep + "/recover"
	since := ts(now.Add(-24 * time.Hour))
	dry := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"since": since, "dry_run": true}})
	if dry.Status != 202 || dry.Body["status"] != "dry_run" || dry.Body["id"] != nil || dry.Body["counted"] != 2.0 {
		t.Fatalf("dry run: %d %s", dry.Status, dry.Raw)
	}
	r := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"since": since}})
	if r.Status != 202 || r.Body["status"] != "running" || r.Body["counted"] != 2.0 || r.Body["sent"] != 0.0 || r.Body["since"] != since {
		t.Fatalf("recover: %d %s", r.Status, r.Raw)
	}
	task := r.Body["id"].(string)
	if again := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"since": since}}); again.Status != 409 || again.ErrorCode() != "conflict" {
		t.Fatalf("second task: %d %s", again.Status, again.Raw)
	}
	runner := &recovery.Runner{DB: testkit.WorkerDB(t), Only: []string{co.Company.ID}}
	if n, err := runner.RunOnce(context.Background()); err != nil || n != 2 {
		t.Fatalf("recovery round: %d, %v; want 2 resent", n, err)
	}
	got := api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + ep + "/recover_tasks/" + task, Key: key})
	if got.Status != 200 || got.Body["status"] != "completed" || got.Body["sent"] != 2.0 || got.Body["completed_at"] == nil {
		t.Fatalf("task: %d %s", got.Status, got.Raw)
	}
	var resent []streams.Delivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&resent).Where("recover_task_id = ?", task).Order("event_id").Scan(ctx)
	})
	var events []string
	unpublished := co.Backlog(t)
	for _, d := range resent {
		if d.Kind != streams.KindResend || d.ResendOf == nil || d.Status != streams.StatusPending || !slices.Contains(unpublished, d.ID) {
			t.Errorf("resend %+v, want a pending, unpublished resend of a logged delivery (backlog %v)", d, unpublished)
		}
		events = append(events, d.EventID)
	}
	want := []string{failed.EventID, twice.EventID}
	slices.Sort(want)
	if !slices.Equal(events, want) {
		t.Errorf("resent events %v, want %v", events, want)
	}
	if n, _ := runner.RunOnce(context.Background()); n != 0 {
		t.Errorf("a completed task resent %d more", n)
	}
	// The task is done: another may start (and finds the resends pending).
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"since": since}}); r.Status != 202 || r.Body["counted"] != 0.0 || r.Body["status"] != "completed" {
		t.Fatalf("after completion: %d %s", r.Status, r.Raw)
	}
}

// Issue 18 item 3: the window and the count are bounded (14 days, 10,000
// deliveries), and over a bound is a 422 naming the field.
func TestRecoverBoundsAre422NamingTheField(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	ep := mustEndpoint(t, api, key, "*")
	now := time.Now().UTC()
	path := "/webhook_endpoints/" + ep + "/recover"
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"no since", map[string]any{"until": ts(now)}, "since required"},
		{"15 days", map[string]any{"since": ts(now.Add(-15 * 24 * time.Hour))}, "since window_too_long"},
		{"until before since", map[string]any{"since": ts(now.Add(-time.Hour)), "until": ts(now.Add(-2 * time.Hour))}, "until invalid_value"},
		{"since not a timestamp", map[string]any{"since": "yesterday"}, "since invalid_timestamp"},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: tc.body})
		if r.Status != 422 || param(r) != tc.want {
			t.Errorf("%s: %d %s, want 422 %s", tc.name, r.Status, r.Raw, tc.want)
		}
	}
	// 10,001 failed deliveries in the window.
	at := now.Add(-time.Hour)
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, `WITH g AS (SELECT md5(random()::text || n) AS h FROM generate_series(1, 10001) n),
			e AS (INSERT INTO event_outbox (id, company_id, type, body, occurred_at, has_deliveries, created_at)
			      SELECT 'evt_' || h, ?0, 'client.created', '{}', ?2, true, ?2 FROM g RETURNING id)
			INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, status, created_at, updated_at)
			SELECT 'dlv_' || substr(md5(id), 1, 26), ?0, ?1, id, 'client.created', 'failed', ?2, ?2 FROM e`,
			co.Company.ID, ep, at)
		return err
	})
	r := api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"since": ts(now.Add(-2 * time.Hour)), "dry_run": true}})
	if r.Status != 422 || param(r) != "since too_many_deliveries" {
		t.Errorf("10,001 deliveries: %d %s, want 422 since too_many_deliveries", r.Status, r.Raw)
	}
	r = api.Do(t, httpkit.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"since": ts(now.Add(-2 * time.Hour)), "until": ts(at)}})
	if r.Status != 202 || r.Body["counted"] != 0.0 {
		t.Errorf("a window before them: %d %s", r.Status, r.Raw)
	}
}

// Spec 4.6 and issue 18: another company's endpoint or task is 404; a
// disabled endpoint is 409, like a resend; only owners and admins recover.
func TestRecoverIsScopedToTheCompanyAndTheRole(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	keyA, keyB := a.OwnerKey(t, webhookPerms...), b.OwnerKey(t, webhookPerms...)
	epA, epB := mustEndpoint(t, api, keyA, "*"), mustEndpoint(t, api, keyB, "*")
	since := ts(time.Now().Add(-time.Hour))
	body := map[string]any{"since": since}
	r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + epA + "/recover", Key: keyA, Body: body})
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	taskA := r.Body["id"].(string)
	for _, tc := range []struct{ method, path string }{
		{"POST", "/webhook_endpoints/" + epA + "/recover"},
		{"GET", "/webhook_endpoints/" + epA + "/recover_tasks/" + taskA},
		{"GET", "/webhook_endpoints/" + epB + "/recover_tasks/" + taskA},
	} {
		var b any
		if tc.method == "POST" {
			b = body
		}
		if r := api.Do(t, httpkit.Req{Method: tc.method, Path: tc.path, Key: keyB, Body: b}); r.Status != 404 || r.ErrorCode() != "resource_not_found" {
			t.Errorf("B %s %s: %d %s, want 404", tc.method, tc.path, r.Status, r.Raw)
		}
	}
	api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + epB + "/disable", Key: keyB})
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + epB + "/recover", Key: keyB, Body: body}); r.Status != 409 {
		t.Errorf("disabled endpoint: %d %s, want 409", r.Status, r.Raw)
	}
	member := a.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember)})
	mk := a.Key(t, member, webhookPerms...).Secret
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + epA + "/recover", Key: mk, Body: body}); r.Status != 403 {
		t.Errorf("a member's key: %d %s, want 403", r.Status, r.Raw)
	}
	reader := a.OwnerKey(t, "webhooks:read")
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + epA + "/recover", Key: reader, Body: body}); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Errorf("a key without webhooks:update: %d %s, want 403 permission_missing", r.Status, r.Raw)
	}
}
