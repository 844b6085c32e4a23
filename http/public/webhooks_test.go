package public_test

import (
	"fmt"
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/apierr"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// Spec 4.6 and 2.8: registration answers 201 with the endpoint and a
// whsec_ secret unique per endpoint; reads never show the secret; the
// endpoint stores its subscriber (member and key); owners and admins are
// mailed (6.7).
func TestCreateWebhookEndpoint(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Member(t, tenant.MemberInput{Email: testkit.Ptr("admin@example.com"), Role: testkit.Ptr(tenant.RoleAdmin)})
	key := co.Key(t, co.Owner, webhookPerms...)
	r := createEndpoint(t, api, key.Secret, "sale.*", "client.created")
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	b := r.Body
	if b["object"] != "webhook_endpoint" || !strings.HasPrefix(b["id"].(string), "we_") || b["url"] != hookURL ||
		b["description"] != "ERP" || fmt.Sprint(b["events"]) != "[sale.* client.created]" || b["status"] != "enabled" ||
		b["disabled_reason"] != nil || b["subscriber_member_id"] != co.Owner.ID || b["subscriber_api_key_id"] != key.ID {
		t.Fatalf("endpoint %s", r.Raw)
	}
	secret, _ := b["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	second := createEndpoint(t, api, key.Secret, "*")
	if second.Body["secret"] == secret || second.Body["secret"] == nil {
		t.Fatal("two endpoints share a secret")
	}
	got := api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + b["id"].(string), Key: key.Secret})
	if got.Status != 200 || got.Body["secret"] != nil || got.Body["url"] != hookURL {
		t.Fatalf("read %d %s", got.Status, got.Raw)
	}
	list := api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints?limit=1", Key: key.Secret})
	if list.Status != 200 || list.Body["object"] != "list" || list.Body["has_more"] != true ||
		list.Body["data"].([]any)[0].(map[string]any)["id"] != second.Body["id"] || strings.Contains(string(list.Raw), "whsec_") {
		t.Fatalf("list %d %s", list.Status, list.Raw)
	}
	ms := co.Mails(t, webhooks.MailEndpointCreated)
	if len(ms) != 2 || fmt.Sprint(ms[0].To) != "[admin@example.com]" || !strings.Contains(ms[1].Body, hookURL) {
		t.Fatalf("mails %+v", ms)
	}
}

// Spec 4.6 / 6.5: every registration failure is a 422 naming the field; a
// refused URL names its cause (not_https, userinfo, not_public,
// unresolvable, invalid_url), on registration and on a URL change alike.
func TestWebhookEndpointValidation(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	existing := mustEndpoint(t, api, key, "*")
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"http", map[string]any{"url": "http://hooks.example.com/x", "events": []string{"*"}}, "url not_https"},
		{"user and password", map[string]any{"url": "https://u:p@hooks.example.com/x", "events": []string{"*"}}, "url userinfo"},
		{"private address", map[string]any{"url": "https://private.example.com/x", "events": []string{"*"}}, "url not_public"},
		{"one private record among public ones", map[string]any{"url": "https://mixed.example.com/x", "events": []string{"*"}}, "url not_public"},
		{"metadata address", map[string]any{"url": "https://meta.example.com/x", "events": []string{"*"}}, "url not_public"},
		{"literal private IP", map[string]any{"url": "https://10.0.0.1/x", "events": []string{"*"}}, "url not_public"},
		{"localhost", map[string]any{"url": "https://localhost/x", "events": []string{"*"}}, "url not_public"},
		{"dotless name", map[string]any{"url": "https://intranet/x", "events": []string{"*"}}, "url not_public"},
		{".local", map[string]any{"url": "https://printer.local/x", "events": []string{"*"}}, "url not_public"},
		{".internal", map[string]any{"url": "https://api.corp.internal/x", "events": []string{"*"}}, "url not_public"},
		{".lan", map[string]any{"url": "https://nas.lan/x", "events": []string{"*"}}, "url not_public"},
		{"does not resolve", map[string]any{"url": "https://nowhere.example.com/x", "events": []string{"*"}}, "url unresolvable"},
		{"port zero", map[string]any{"url": "https://hooks.example.com:0/x", "events": []string{"*"}}, "url invalid_url"},
		{"no host", map[string]any{"url": "https:///x", "events": []string{"*"}}, "url invalid_url"},
		{"not a host name", map[string]any{"url": "https://hooks..example.com/x", "events": []string{"*"}}, "url invalid_url"},
		{"IPv4 not as a dotted quad", map[string]any{"url": "https://2130706433/x", "events": []string{"*"}}, "url invalid_url"},
		{"no url", map[string]any{"events": []string{"*"}}, "url required"},
		{"unknown event", map[string]any{"url": hookURL, "events": []string{"sale.exploded"}}, "events invalid_event"},
		{"unknown family", map[string]any{"url": hookURL, "events": []string{"invoice.*"}}, "events invalid_event"},
		{"ping is not subscribable", map[string]any{"url": hookURL, "events": []string{"ping"}}, "events invalid_event"},
		{"* with another name", map[string]any{"url": hookURL, "events": []string{"*", "sale.paid"}}, "events invalid_event"},
		{"no events", map[string]any{"url": hookURL, "events": []string{}}, "events required"},
		{"events omitted", map[string]any{"url": hookURL}, "events required"},
		{"events not an array", map[string]any{"url": hookURL, "events": "*"}, "events invalid_type"},
		{"description too long", map[string]any{"url": hookURL, "events": []string{"*"}, "description": strings.Repeat("a", 10001)}, "description too_long"},
	} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key, Body: tc.body})
		if r.Status != 422 || r.ErrorCode() != "validation_failed" || param(r) != tc.want {
			t.Errorf("%s: %d %s, want 422 %s", tc.name, r.Status, r.Raw, tc.want)
		}
		// A URL change is refused with the same cause (spec 4.6).
		if u, ok := tc.body["url"]; ok && strings.HasPrefix(tc.want, "url ") {
			r := api.Do(t, httpkit.Req{Method: "PATCH", Path: "/webhook_endpoints/" + existing, Key: key, Body: map[string]any{"url": u}})
			if r.Status != 422 || r.ErrorCode() != "validation_failed" || param(r) != tc.want {
				t.Errorf("%s, as a URL change: %d %s, want 422 %s", tc.name, r.Status, r.Raw, tc.want)
			}
		}
	}
	// Each cause has its message in every language of the catalogue.
	r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key, Header: map[string]string{"Accept-Language": "es"},
		Body: map[string]any{"url": "https://localhost/x", "events": []string{"*"}}})
	if items := r.Body["error"].(map[string]any)["errors"].([]any); !strings.HasPrefix(items[0].(map[string]any)["message"].(string),
		"El host debe ser público: se rechazan nombres locales o internos y direcciones privadas, reservadas o de metadatos de la nube.") {
		t.Errorf("not_public in Spanish: %s", r.Raw)
	}
	// Any port 1 to 65535 is fine; duplicates collapse.
	r = api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key,
		Body: map[string]any{"url": "https://hooks.example.com:8443/x", "events": []string{"sale.paid", "sale.paid", "financial_transaction.*"}}})
	if r.Status != 201 || fmt.Sprint(r.Body["events"]) != "[sale.paid financial_transaction.*]" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
}

// Issue 23 item 2: registering a receiver on this machine is refused
// (not_public) with a message, in every language, that says how to test
// on one's machine: the development setting and an https://127.0.0.1 URL.
// Its doc_url leads (errors.md, the field code's row) to "Testing webhooks
// on your machine" (TestNotPublicLeadsToTestingWebhooksOnYourMachine).
func TestAPrivateAddressIsRefusedNamingTheDevelopmentSetting(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	for _, lang := range []string{"pt-BR", "en", "es"} {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key, Header: map[string]string{"Accept-Language": lang},
			Body: map[string]any{"url": "https://127.0.0.1:9443/hooks", "events": []string{"*"}}})
		if r.Status != 422 || param(r) != "url not_public" {
			t.Fatalf("%s: %d %s", lang, r.Status, r.Raw)
		}
		e := r.Body["error"].(map[string]any)
		msg := e["errors"].([]any)[0].(map[string]any)["message"].(string)
		if !strings.Contains(msg, "OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32") || !strings.Contains(msg, "https://127.0.0.1") {
			t.Errorf("%s: the message does not say how to test on one's machine: %q", lang, msg)
		}
		if e["doc_url"] != apierr.Default.DocURL(apierr.ValidationFailed) {
			t.Errorf("%s: doc_url %v", lang, e["doc_url"])
		}
	}
}

// Spec 4.6: only owners and admins, reads included; 5.4: <module>:read per
// subscribed module (all for *, but webhooks: "*" leaves the operational
// events out, decision 0037); sale.* needs only sales:read;
// financial_transaction.* needs finance:read; the operational events
// webhooks:read.
func TestWebhookRolesAndModulePermissions(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ticked := tenant.MemberPermissions{"webhooks": {"read", "create", "update", "delete"}, "sales": {"read"}}
	member := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Permissions: &ticked})
	viewer := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleViewer), Permissions: &ticked})
	admin := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleAdmin)})
	id := mustEndpoint(t, api, co.OwnerKey(t, webhookPerms...), "sale.*")
	for _, m := range []*tenant.Member{member, viewer} {
		k := co.Key(t, m, webhookPerms...).Secret
		for _, req := range []httpkit.Req{
			{Method: "POST", Path: "/webhook_endpoints", Body: map[string]any{"url": hookURL, "events": []string{"sale.*"}}},
			{Method: "GET", Path: "/webhook_endpoints"},
			{Method: "GET", Path: "/webhook_endpoints/" + id},
			{Method: "GET", Path: "/webhook_endpoints/" + id + "/deliveries"},
			{Method: "PATCH", Path: "/webhook_endpoints/" + id, Body: map[string]any{"description": "x"}},
			{Method: "POST", Path: "/webhook_endpoints/" + id + "/disable"},
			{Method: "POST", Path: "/webhook_endpoints/" + id + "/ping"},
			{Method: "DELETE", Path: "/webhook_endpoints/" + id},
		} {
			req.Key = k
			if r := api.Do(t, req); r.Status != 403 || r.ErrorCode() != "member_permission_denied" {
				t.Errorf("%s %s %s: %d %s", m.Role, req.Method, req.Path, r.Status, r.Raw)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		perms  []string
		events []string
		status int
		code   string
	}{
		{"sale.* needs only sales:read", []string{"webhooks:create", "sales:read"}, []string{"sale.*"}, 201, ""},
		{"sale.paid without sales:read", []string{"webhooks:create", "finance:read"}, []string{"sale.paid"}, 403, "permission_missing"},
		{"financial_transaction.* needs finance:read", []string{"webhooks:create", "sales:read"}, []string{"financial_transaction.*"}, 403, "permission_missing"},
		{"financial_transaction.* with finance:read", []string{"webhooks:create", "finance:read"}, []string{"financial_transaction.*"}, 201, ""},
		{"stock.changed is the products module", []string{"webhooks:create", "products:read"}, []string{"stock.changed"}, 201, ""},
		{"* needs every module", append([]string{"webhooks:create"}, allReads[1:]...), []string{"*"}, 403, "permission_missing"},
		{"* with every module (no webhooks:read: * leaves the operational events out)", append([]string{"webhooks:create"}, allReads...), []string{"*"}, 201, ""},
		{"webhook_endpoint.* needs webhooks:read", append([]string{"webhooks:create"}, allReads...), []string{"webhook_endpoint.*"}, 403, "permission_missing"},
		{"webhook_delivery.given_up needs webhooks:read", []string{"webhooks:create", "sales:read"}, []string{"sale.*", "webhook_delivery.given_up"}, 403, "permission_missing"},
		{"webhook_endpoint.* with webhooks:read", []string{"webhooks:create", "webhooks:read"}, []string{"webhook_endpoint.*"}, 201, ""},
		{"the operational events beside others", []string{"webhooks:create", "webhooks:read", "sales:read"}, []string{"sale.paid", "webhook_endpoint.disabled", "webhook_delivery.*"}, 201, ""},
		{"no webhooks:create", allReads, []string{"*"}, 403, "permission_missing"},
	} {
		r := createEndpoint(t, api, co.Key(t, admin, tc.perms...).Secret, tc.events...)
		if r.Status != tc.status || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
}

// Part 8: the endpoint quota per plan (Start 3) gives 403
// plan_limit_reached; disabled endpoints count.
func TestWebhookEndpointQuota(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(tenant.PlanStart)})
	key := co.OwnerKey(t, webhookPerms...)
	for i := range 3 {
		id := mustEndpoint(t, api, key, "*")
		if i == 0 {
			api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/disable", Key: key})
		}
	}
	if r := createEndpoint(t, api, key, "*"); r.Status != 403 || r.ErrorCode() != "plan_limit_reached" {
		t.Fatalf("4th endpoint on Start: %d %s", r.Status, r.Raw)
	}
	for plan, n := range map[tenant.Plan]int{tenant.PlanPleno: 10, tenant.PlanSupra: 25} {
		if got := plan.Limits().WebhookEndpoints; got != n {
			t.Errorf("%s: %d endpoints", plan, got)
		}
	}
}

// An id of another company, a malformed or an unknown one is 404.
func TestWebhookEndpointOfAnotherCompanyIsNotFound(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	id := mustEndpoint(t, api, a.OwnerKey(t, webhookPerms...), "*")
	kb := b.OwnerKey(t, webhookPerms...)
	for _, p := range []string{"/webhook_endpoints/" + id, "/webhook_endpoints/nope", "/webhook_endpoints/we_00000000000000000000000000",
		"/webhook_endpoints/" + id + "/deliveries"} {
		if r := api.Do(t, httpkit.Req{Method: "GET", Path: p, Key: kb}); r.Status != 404 || r.ErrorCode() != "resource_not_found" {
			t.Errorf("%s: %d %s", p, r.Status, r.Raw)
		}
	}
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + id + "/ping", Key: kb}); r.Status != 404 {
		t.Errorf("ping: %d", r.Status)
	}
}
