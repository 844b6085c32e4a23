package public_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// Issue 18 item 1: a key with webhook permissions mints a one-time link
// to the company's portal: one hour by default, capabilities the key
// itself covers, owners and admins only (spec 4.6); sessions are listed
// and revoked, another company's is 404; a replay shows no link.
func TestPortalSessionsMintedByAKey(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.Key(t, co.Owner, webhookPerms...)
	r := api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions", Key: key.Secret})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	b := r.Body
	link, _ := b["url"].(string)
	if !strings.HasPrefix(link, api.URL+"/portal/login?token=opl_") || b["status"] != "unused" ||
		fmt.Sprint(b["capabilities"]) != "[read_only]" || b["created_by_member_id"] != co.Owner.ID || b["created_by_api_key_id"] != key.ID {
		t.Fatalf("session %s", r.Raw)
	}
	exp, _ := time.Parse(time.RFC3339, b["expires_at"].(string))
	if d := time.Until(exp); d < 59*time.Minute || d > time.Hour {
		t.Errorf("expires in %v, want one hour", d)
	}
	id := b["id"].(string)

	full := api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions", Key: key.Secret, Header: map[string]string{"Idempotency-Key": "portal-1"},
		Body: map[string]any{"capabilities": []string{"recover", "manage_endpoints", "view_secret"}, "ttl_seconds": 604800}})
	if full.Status != 201 || fmt.Sprint(full.Body["capabilities"]) != "[manage_endpoints recover view_secret]" || full.Body["url"] == nil {
		t.Fatalf("full session %d %s", full.Status, full.Raw)
	}
	replay := api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions", Key: key.Secret, Header: map[string]string{"Idempotency-Key": "portal-1"},
		Body: map[string]any{"capabilities": []string{"recover", "manage_endpoints", "view_secret"}, "ttl_seconds": 604800}})
	if replay.Status != 201 || replay.Body["url"] != nil || replay.Body["id"] != full.Body["id"] {
		t.Errorf("replay %d %s, want the session without its link", replay.Status, replay.Raw)
	}

	list := api.Do(t, httpkit.Req{Method: "GET", Path: "/portal_sessions", Key: key.Secret})
	if list.Status != 200 || len(list.Body["data"].([]any)) != 2 || strings.Contains(string(list.Raw), "opl_") {
		t.Fatalf("list %d %s", list.Status, list.Raw)
	}
	other := testkit.NewCompany(t, tenant.CompanyInput{})
	otherKey := other.OwnerKey(t, webhookPerms...)
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions/" + id + "/revoke", Key: otherKey}); r.Status != 404 {
		t.Errorf("revoke another company's session: %d %s, want 404", r.Status, r.Raw)
	}
	rv := api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions/" + id + "/revoke", Key: key.Secret})
	if rv.Status != 200 || rv.Body["status"] != "revoked" || rv.Body["revoked_at"] == nil {
		t.Fatalf("revoke %d %s", rv.Status, rv.Raw)
	}
}

// Issue 18 item 1: a session never does more than the key that mints it,
// capabilities are a closed set (read_only does not go with a capability
// that writes), the lifetime is 1 minute to 7 days, and only owners' and
// admins' keys mint (spec 4.6).
func TestPortalSessionRules(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	owner := co.OwnerKey(t, webhookPerms...)
	reader := co.OwnerKey(t, "webhooks:read")
	member := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember),
		Permissions: &tenant.MemberPermissions{"webhooks": {"read", "create", "update", "delete"}}})
	memberKey := co.Key(t, member, webhookPerms...).Secret
	for _, tc := range []struct {
		name, key string
		body      map[string]any
		status    int
		want      string
	}{
		{"read_only with manage_endpoints", owner, map[string]any{"capabilities": []string{"read_only", "manage_endpoints"}}, 422, "capabilities not_allowed"},
		{"unknown capability", owner, map[string]any{"capabilities": []string{"admin"}}, 422, "capabilities invalid_value"},
		{"too short", owner, map[string]any{"ttl_seconds": 10}, 422, "ttl_seconds out_of_range"},
		{"too long", owner, map[string]any{"ttl_seconds": 604801}, 422, "ttl_seconds out_of_range"},
		{"recover without webhooks:update", reader, map[string]any{"capabilities": []string{"recover"}}, 403, "permission_missing"},
		{"view_secret without webhooks:update", reader, map[string]any{"capabilities": []string{"read_only", "view_secret"}}, 403, "permission_missing"},
		{"a member's key", memberKey, map[string]any{}, 403, "member_permission_denied"},
		{"read_only by a reader", reader, map[string]any{"capabilities": []string{"read_only"}}, 201, ""},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions", Key: tc.key, Body: tc.body})
		got := r.ErrorCode()
		if r.Status == 422 {
			got = param(r)
		}
		if r.Status != tc.status || got != tc.want {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Raw, tc.status, tc.want)
		}
	}
}
