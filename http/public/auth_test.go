package public_test

import (
	"bytes"
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

var requestIDPattern = regexp.MustCompile(`"request_id":"req_[0-9a-f]+"`)

// Part 5 item 2: every authentication failure is the same 401, byte for byte
// apart from request_id, whatever the cause.
func TestEveryAuthenticationFailureIsTheSame401(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	now := time.Now()

	revoked := co.Key(t, co.Owner, "team:read")
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.RevokeKey(ctx, tx, revoked.ID, tenant.RevokedManually, now)
		return err
	})
	expiring := co.KeyWith(t, tenant.KeyInput{MemberID: co.Owner.ID, Permissions: []string{"team:read"}, ExpiresAt: testkit.Ptr(now.Add(time.Second))})
	ipBound := co.KeyWith(t, tenant.KeyInput{MemberID: co.Owner.ID, Permissions: []string{"team:read"}, AllowedCIDRs: []string{"203.0.113.0/24"}})
	suspendedMember := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleAdmin)})
	suspendedKey := co.Key(t, suspendedMember, "team:read")
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.UpdateMember(ctx, tx, suspendedMember.ID, tenant.MemberInput{Status: testkit.Ptr("suspended")}, now)
		return err
	})
	removedMember := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleAdmin)})
	removedKey := co.Key(t, removedMember, "team:read")
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.UpdateMember(ctx, tx, removedMember.ID, tenant.MemberInput{Status: testkit.Ptr("removed")}, now)
		return err
	})
	suspendedCo := testkit.NewCompany(t, tenant.CompanyInput{Status: testkit.Ptr("suspended")})
	suspendedCoKey := suspendedCo.OwnerKey(t, "team:read")

	time.Sleep(time.Until(now.Add(1100 * time.Millisecond))) // let the expiring key expire

	cases := map[string]map[string]string{
		"no header":               {},
		"not bearer":              {"Authorization": "Basic dXNlcjpwYXNz"},
		"malformed key":           {"Authorization": "Bearer nope"},
		"unknown well-formed key": {"Authorization": "Bearer " + tenant.NewKeySecret()},
		"revoked key":             {"Authorization": "Bearer " + revoked.Secret},
		"expired key":             {"Authorization": "Bearer " + expiring.Secret},
		"ip outside allow list":   {"Authorization": "Bearer " + ipBound.Secret},
		"suspended member":        {"Authorization": "Bearer " + suspendedKey.Secret},
		"removed member":          {"Authorization": "Bearer " + removedKey.Secret},
		"suspended company":       {"Authorization": "Bearer " + suspendedCoKey},
	}
	var first []byte
	for name, h := range cases {
		r := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: h})
		if r.Status != 401 || r.ErrorCode() != "api_key_invalid" {
			t.Fatalf("%s: %d %s", name, r.Status, r.Raw)
		}
		if !bytes.Contains(r.Raw, []byte(`"request_id":"`+r.Header.Get("Request-Id")+`"`)) {
			t.Fatalf("%s: request_id differs from header: %s", name, r.Raw)
		}
		norm := requestIDPattern.ReplaceAll(r.Raw, []byte(`"request_id":"X"`))
		if first == nil {
			first = norm
		} else if !bytes.Equal(first, norm) {
			t.Fatalf("%s: body differs:\n%s\n%s", name, first, norm)
		}
	}
}

// Part 5.2: layers apply immediately after a change.
func TestChangesApplyOnTheVeryNextRequest(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	member := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember),
		Permissions: &tenant.MemberPermissions{"service_orders": {"read"}}})
	key := co.Key(t, member, "service_orders:read")
	get := func() *httpkit.Response {
		return api.Do(t, httpkit.Req{Method: "GET", Path: "/service_order_types", Key: key.Secret})
	}
	if r := get(); r.Status != 200 {
		t.Fatalf("before: %d %s", r.Status, r.Raw)
	}
	// Member permission removed through the admin API.
	r := api.Admin(t, "PATCH", "/companies/"+co.Company.ID+"/members/"+member.ID, map[string]any{"permissions": map[string]any{}})
	if r.Status != 200 {
		t.Fatalf("admin: %d %s", r.Status, r.Raw)
	}
	if r := get(); r.Status != 403 || r.ErrorCode() != "member_permission_denied" {
		t.Fatalf("after permission removal: %d %s", r.Status, r.Raw)
	}
	api.Admin(t, "PATCH", "/companies/"+co.Company.ID+"/members/"+member.ID, map[string]any{"permissions": map[string]any{"service_orders": []string{"read"}}})
	if r := get(); r.Status != 200 {
		t.Fatalf("restored: %d %s", r.Status, r.Raw)
	}
	// Plan downgraded to Free.
	api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"plan": "free"})
	if r := get(); r.Status != 403 || r.ErrorCode() != "plan_feature_unavailable" {
		t.Fatalf("after downgrade: %d %s", r.Status, r.Raw)
	}
	api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"plan": "start", "subscription_status": "unpaid"})
	if r := get(); r.Status != 403 || r.ErrorCode() != "subscription_inactive" {
		t.Fatalf("unpaid: %d %s", r.Status, r.Raw)
	}
	api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"subscription_status": "active"})
	if r := get(); r.Status != 200 {
		t.Fatalf("reactivated: %d %s", r.Status, r.Raw)
	}
	// Key revoked.
	api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys/"+key.ID+"/revoke", map[string]any{})
	if r := get(); r.Status != 401 {
		t.Fatalf("after revoke: %d %s", r.Status, r.Raw)
	}
}

// Part 5 item 6: rotation with a grace period keeps the old key working
// until it ends; "stop now" ends it at once; the new key has the same
// permissions.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	old := co.Key(t, co.Owner, "team:read", "leads:write")
	r := api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys/"+old.ID+"/rotate", map[string]any{"grace_period_seconds": 3600})
	if r.Status != 200 {
		t.Fatalf("rotate: %d %s", r.Status, r.Raw)
	}
	newSecret := r.Body["new_key"].(map[string]any)["secret"].(string)
	for _, k := range []string{old.Secret, newSecret} {
		me := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: k})
		if me.Status != 200 {
			t.Fatalf("during grace: %d %s", me.Status, me.Raw)
		}
		perms := me.Body["key"].(map[string]any)["permissions"].([]any)
		if len(perms) != 2 || perms[0] != "leads:write" || perms[1] != "team:read" {
			t.Fatalf("permissions changed on rotation: %v", perms)
		}
	}
	r = api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys/"+r.Body["new_key"].(map[string]any)["id"].(string)+"/rotate", map[string]any{"grace_period_seconds": 0})
	if r.Status != 200 {
		t.Fatalf("rotate now: %d %s", r.Status, r.Raw)
	}
	if me := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: newSecret}); me.Status != 401 {
		t.Fatalf("stopped key still works: %d", me.Status)
	}
}
