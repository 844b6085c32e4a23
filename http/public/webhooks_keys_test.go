package public_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// Spec 3.3: rotating a key with "stop now", or revoking it after public
// exposure, disables the endpoints subscribed with it
// (emergency_key_rotation) and mails the URL domains once; a grace period
// moves the subscription to the new key; a plain revocation leaves them.
func TestKeyEventsTouchTheirEndpoints(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Member(t, tenant.MemberInput{Email: testkit.Ptr("admin@example.com"), Role: testkit.Ptr(tenant.RoleAdmin)})
	keys := map[string]*tenant.NewKey{}
	eps := map[string]string{}
	for _, name := range []string{"stop", "grace", "exposed", "revoked", "bystander"} {
		keys[name] = co.Key(t, co.Owner, webhookPerms...)
		eps[name] = mustEndpoint(t, api, keys[name].Secret, "*")
	}
	// A second endpoint of the "stop" key on another domain.
	second := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: keys["stop"].Secret,
		Body: map[string]any{"url": "https://other.example.net/in", "events": []string{"sale.*"}}})
	adminPath := "/companies/" + co.Company.ID + "/api_keys/"
	if r := api.Admin(t, "POST", adminPath+keys["stop"].ID+"/rotate", map[string]any{"grace_period_seconds": 0}); r.Status != 200 {
		t.Fatalf("rotate: %d %s", r.Status, r.Raw)
	}
	grace := api.Admin(t, "POST", adminPath+keys["grace"].ID+"/rotate", map[string]any{"grace_period_seconds": 3600})
	if grace.Status != 200 {
		t.Fatalf("rotate: %d %s", grace.Status, grace.Raw)
	}
	newKey := grace.Body["new_key"].(map[string]any)["id"].(string)
	for name, reason := range map[string]string{"exposed": "exposed", "revoked": "revoked"} {
		if r := api.Admin(t, "POST", adminPath+keys[name].ID+"/revoke", map[string]any{"reason": reason}); r.Status != 200 {
			t.Fatalf("revoke: %d %s", r.Status, r.Raw)
		}
	}
	reader := co.OwnerKey(t, webhookPerms...)
	get := func(id string) map[string]any {
		return api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + id, Key: reader}).Body
	}
	for name, want := range map[string]string{"stop": "disabled", "grace": "enabled", "exposed": "disabled", "revoked": "enabled", "bystander": "enabled"} {
		e := get(eps[name])
		if e["status"] != want {
			t.Errorf("%s: status %v, want %s", name, e["status"], want)
		}
		if want == "disabled" && e["disabled_reason"] != "emergency_key_rotation" {
			t.Errorf("%s: reason %v", name, e["disabled_reason"])
		}
	}
	if e := get(second.Body["id"].(string)); e["status"] != "disabled" {
		t.Errorf("second endpoint of the stopped key: %v", e["status"])
	}
	if e := get(eps["grace"]); e["subscriber_api_key_id"] != newKey || e["subscriber_member_id"] != co.Owner.ID {
		t.Errorf("grace: subscription not moved: %v", e)
	}
	ms := co.Mails(t, webhooks.MailEmergencyKeyRotation)
	if len(ms) != 2 {
		t.Fatalf("%d emergency mails, want one per key", len(ms))
	}
	for _, m := range ms {
		if !strings.Contains(m.Body, "- hooks.example.com") || strings.Contains(m.Body, "https://") {
			t.Errorf("mail lists no domains: %s", m.Body)
		}
	}
	stopMail := ms[1]
	if strings.Contains(ms[0].Body, keys["stop"].ID) {
		stopMail = ms[0]
	}
	if !strings.Contains(stopMail.Body, "- other.example.net") {
		t.Errorf("stop mail misses a domain: %s", stopMail.Body)
	}
}

// The dashboard manages endpoints too (admin API): the subscriber is the
// acting member with no key; only owners and admins may act.
func TestDashboardEndpointHasNoSubscriberKey(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	member := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember)})
	base := "/companies/" + co.Company.ID + "/webhook_endpoints"
	r := api.Admin(t, "POST", base, map[string]any{"member_id": co.Owner.ID, "url": hookURL, "events": []string{"*"}})
	if r.Status != 201 || r.Body["subscriber_member_id"] != co.Owner.ID || r.Body["subscriber_api_key_id"] != nil ||
		!strings.HasPrefix(r.Body["secret"].(string), "whsec_") {
		t.Fatalf("dashboard create: %d %s", r.Status, r.Raw)
	}
	if r := api.Admin(t, "POST", base, map[string]any{"member_id": member.ID, "url": hookURL, "events": []string{"*"}}); r.Status != 403 || r.ErrorCode() != "member_permission_denied" {
		t.Fatalf("member: %d %s", r.Status, r.Raw)
	}
	if r := api.Admin(t, "POST", base, map[string]any{"member_id": co.Owner.ID, "url": "https://private.example.com/", "events": []string{"*"}}); r.Status != 422 {
		t.Fatalf("private URL from the dashboard: %d %s", r.Status, r.Raw)
	}
}

// DESIGN "A write, end to end" 4: a dashboard write's events are published
// on EVENTS (and its deliveries on DELIVERIES) after commit, once each. The
// answer does not wait for JetStream's acknowledgement (decision 0022), so
// the test waits for the messages, not for the answer.
func TestDashboardWritesArePublishedAfterCommit(t *testing.T) {
	t.Parallel()
	api, js := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	mustEndpoint(t, api, co.OwnerKey(t, webhookPerms...), "client.*")
	r := api.Admin(t, "POST", "/companies/"+co.Company.ID+"/clients", map[string]any{"name": "Maria"})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	for stream, filter := range map[string]string{"EVENTS": "oficina.events." + co.Company.ID + ".client.created",
		"DELIVERIES": "oficina.dlv.*." + co.Company.ID + ".>"} {
		s, err := js.Stream(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		testkit.Poll(30*time.Second, 10*time.Millisecond, func() bool {
			info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(filter))
			if err != nil {
				t.Fatal(err)
			}
			n = 0
			for _, c := range info.State.Subjects {
				n += c
			}
			return n > 0
		})
		if n != 1 {
			t.Errorf("%s holds %d messages for %s", stream, n, filter)
		}
	}
}
