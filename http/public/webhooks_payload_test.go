package public_test

import (
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// Issue 26 item 3: payload is full unless the endpoint asks for thin, on
// creation or by PATCH; anything else is 422 on payload, and null too.
func TestEndpointPayloadIsFullOrThin(t *testing.T) {
	t.Parallel()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	do := func(method, path string, body map[string]any) *httpkit.Response {
		return api.Do(t, httpkit.Req{Method: method, Path: path, Key: key, Body: body})
	}
	full := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"sale.*"}})
	if full.Status != 201 || full.Body["payload"] != "full" {
		t.Fatalf("default: %d %s", full.Status, full.Raw)
	}
	thin := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"sale.*"}, "payload": "thin"})
	if thin.Status != 201 || thin.Body["payload"] != "thin" {
		t.Fatalf("thin: %d %s", thin.Status, thin.Raw)
	}
	id := full.Body["id"].(string)
	if r := do("PATCH", "/webhook_endpoints/"+id, map[string]any{"payload": "thin"}); r.Status != 200 || r.Body["payload"] != "thin" {
		t.Errorf("PATCH to thin: %d %s", r.Status, r.Raw)
	}
	if r := do("GET", "/webhook_endpoints/"+id, nil); r.Body["payload"] != "thin" {
		t.Errorf("read back: %s", r.Raw)
	}
	for _, body := range []map[string]any{{"payload": "fat"}, {"payload": nil}, {"payload": 1}} {
		if r := do("PATCH", "/webhook_endpoints/"+id, body); r.Status != 422 || param(r) == "" || param(r)[:7] != "payload" {
			t.Errorf("PATCH %v: %d %s", body, r.Status, r.Raw)
		}
	}
	if r := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"*"}, "payload": "fat"}); r.Status != 422 {
		t.Errorf("create with payload fat: %d %s", r.Status, r.Raw)
	}
}
