package admin_test

import (
	"strings"
	"testing"
	"time"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 18 items 1 and 3: the dashboard opens the portal for an owner or
// admin (a one-time link on the public listener), lists and revokes its
// sessions, and recovers an endpoint's failed deliveries, with the public
// API's rules.
func TestDashboardPortalSessionsAndRecovery(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{Destinations: testkit.AnyURL{}})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	member := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember)})
	base := "/companies/" + co.Company.ID
	r := api.Admin(t, "POST", base+"/portal_sessions", map[string]any{"member_id": co.Owner.ID, "capabilities": []string{"recover"}, "ttl_seconds": 7200})
	if r.Status != 201 || !strings.HasPrefix(r.Body["url"].(string), api.URL+"/portal/login?token=opl_") || r.Body["created_by_api_key_id"] != nil {
		t.Fatalf("mint: %d %s", r.Status, r.Raw)
	}
	id := r.Body["id"].(string)
	if r := api.Admin(t, "POST", base+"/portal_sessions", map[string]any{"member_id": member.ID}); r.Status != 403 {
		t.Errorf("a member who is not owner or admin: %d %s, want 403", r.Status, r.Raw)
	}
	if r := api.Admin(t, "GET", base+"/portal_sessions", nil); r.Status != 200 || len(r.Body["data"].([]any)) != 1 {
		t.Errorf("list: %d %s", r.Status, r.Raw)
	}
	if r := api.Admin(t, "POST", base+"/portal_sessions/"+id+"/revoke", map[string]any{}); r.Status != 200 || r.Body["status"] != "revoked" {
		t.Errorf("revoke: %d %s", r.Status, r.Raw)
	}

	ep := api.Admin(t, "POST", base+"/webhook_endpoints", map[string]any{"member_id": co.Owner.ID, "url": "https://hooks.example.com/", "events": []string{"*"}})
	epID := ep.Body["id"].(string)
	co.LogDelivery(t, epID, "client.created", streams.StatusFailed, time.Now().Add(-time.Hour))
	since := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
	if r := api.Admin(t, "POST", base+"/webhook_endpoints/"+epID+"/recover", map[string]any{"since": since, "dry_run": true}); r.Status != 202 || r.Body["counted"] != 1.0 {
		t.Fatalf("dry run: %d %s", r.Status, r.Raw)
	}
	task := api.Admin(t, "POST", base+"/webhook_endpoints/"+epID+"/recover", map[string]any{"since": since})
	if task.Status != 202 || task.Body["status"] != "running" {
		t.Fatalf("recover: %d %s", task.Status, task.Raw)
	}
	if r := api.Admin(t, "GET", base+"/webhook_endpoints/"+epID+"/recover_tasks/"+task.Body["id"].(string), nil); r.Status != 200 || r.Body["counted"] != 1.0 {
		t.Errorf("task: %d %s", r.Status, r.Raw)
	}
	if r := api.Admin(t, "POST", base+"/webhook_endpoints/"+epID+"/recover", map[string]any{"since": since}); r.Status != 409 {
		t.Errorf("second task: %d %s, want 409", r.Status, r.Raw)
	}
}
