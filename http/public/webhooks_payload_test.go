package public_test

import (
	"fmt"
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// Issue 26 item 3 and issue 27 item 4: payload is full and ordering none
// unless the endpoint asks otherwise, on creation or by PATCH; any other
// value is 422 on that member, and null too.
func TestEndpointPayloadAndOrderingTakeTheirValuesOnly(t *testing.T) {
	t.Parallel()
	do := endpointCaller(t)
	for _, tt := range []struct{ member, def, other, bad string }{
		{"payload", "full", "thin", "fat"},
		{"ordering", "none", "object", "fifo"},
	} {
		t.Run(tt.member, func(t *testing.T) {
			def := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"sale.*"}})
			if def.Status != 201 || def.Body[tt.member] != tt.def {
				t.Fatalf("default: %d %s", def.Status, def.Raw)
			}
			other := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"sale.*"}, tt.member: tt.other})
			if other.Status != 201 || other.Body[tt.member] != tt.other {
				t.Fatalf("%s: %d %s", tt.other, other.Status, other.Raw)
			}
			id := def.Body["id"].(string)
			if r := do("PATCH", "/webhook_endpoints/"+id, map[string]any{tt.member: tt.other}); r.Status != 200 || r.Body[tt.member] != tt.other {
				t.Errorf("PATCH to %s: %d %s", tt.other, r.Status, r.Raw)
			}
			if r := do("GET", "/webhook_endpoints/"+id, nil); r.Body[tt.member] != tt.other {
				t.Errorf("read back: %s", r.Raw)
			}
			for _, body := range []map[string]any{{tt.member: tt.bad}, {tt.member: nil}, {tt.member: 1}} {
				if r := do("PATCH", "/webhook_endpoints/"+id, body); r.Status != 422 || !strings.HasPrefix(param(r), tt.member) {
					t.Errorf("PATCH %v: %d %s", body, r.Status, r.Raw)
				}
			}
			if r := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"*"}, tt.member: tt.bad}); r.Status != 422 {
				t.Errorf("create with %s %s: %d %s", tt.member, tt.bad, r.Status, r.Raw)
			}
		})
	}
}

// Issue 27 item 2: custom headers. The endpoint shows their names, never
// their values; a name a delivery sets itself, or that HTTP reserves, a
// name that is no token, a value with a line break or too long, or more
// than 10 headers is 422 on headers[.name]; PATCH replaces them, and null
// removes them all.
func TestEndpointCustomHeadersShowOnlyTheirNames(t *testing.T) {
	t.Parallel()
	do := endpointCaller(t)
	r := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"sale.*"},
		"headers": map[string]string{"x-api-key": "gw-0123456789", "Authorization": "Bearer gateway-token"}})
	if r.Status != 201 || strings.Contains(string(r.Raw), "gw-0123456789") || strings.Contains(string(r.Raw), "gateway-token") {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	if got := fmt.Sprint(r.Body["headers"]); got != "[Authorization X-Api-Key]" {
		t.Errorf("headers %s, want the two names, canonical and sorted", got)
	}
	id := r.Body["id"].(string)
	many := map[string]string{}
	for i := range 11 {
		many[fmt.Sprintf("X-H%d", i)] = "v"
	}
	for _, tc := range []struct {
		headers map[string]string
		param   string
	}{
		{map[string]string{"Webhook-Signature": "v1,forged"}, "headers.Webhook-Signature invalid_value"},
		{map[string]string{"webhook-custom": "x"}, "headers.webhook-custom invalid_value"},
		{map[string]string{"Content-Type": "text/plain"}, "headers.Content-Type invalid_value"},
		{map[string]string{"Host": "evil.example"}, "headers.Host invalid_value"},
		{map[string]string{"X Api": "x"}, "headers.X Api invalid_value"},
		{map[string]string{"X-Api-Key": "a\r\nInjected: 1"}, "headers.X-Api-Key invalid_value"},
		{map[string]string{"X-Api-Key": strings.Repeat("a", 1025)}, "headers.X-Api-Key invalid_value"},
		{map[string]string{"X-Api-Key": ""}, "headers.X-Api-Key invalid_value"},
		{many, "headers too_long"},
	} {
		if r := do("PATCH", "/webhook_endpoints/"+id, map[string]any{"headers": tc.headers}); r.Status != 422 || param(r) != tc.param {
			t.Errorf("%v: %d %s (param %q, want %q)", tc.headers, r.Status, r.Raw, param(r), tc.param)
		}
	}
	if r := do("PATCH", "/webhook_endpoints/"+id, map[string]any{"headers": map[string]string{"X-Other": "1"}}); r.Status != 200 ||
		fmt.Sprint(r.Body["headers"]) != "[X-Other]" {
		t.Errorf("replace: %d %s", r.Status, r.Raw)
	}
	if r := do("PATCH", "/webhook_endpoints/"+id, map[string]any{"headers": nil}); r.Status != 200 || fmt.Sprint(r.Body["headers"]) != "[]" {
		t.Errorf("remove all: %d %s", r.Status, r.Raw)
	}
}

// Issue 27 item 2: OAuth2 client credentials are shown without their
// secret; each member is required, and the token URL passes the rules of
// an endpoint's URL (422 on oauth2.<member>); null removes them.
func TestEndpointOAuth2ShowsNoSecret(t *testing.T) {
	t.Parallel()
	do := endpointCaller(t)
	oauth := map[string]any{"token_url": "https://hooks.example.com/token", "client_id": "oficina", "client_secret": "s3cret-value"}
	r := do("POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"sale.*"}, "oauth2": oauth})
	if r.Status != 201 || strings.Contains(string(r.Raw), "s3cret-value") {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	if o, _ := r.Body["oauth2"].(map[string]any); o["client_id"] != "oficina" || o["token_url"] != "https://hooks.example.com/token" {
		t.Errorf("oauth2 %v", r.Body["oauth2"])
	}
	id := r.Body["id"].(string)
	for _, tc := range []struct {
		oauth map[string]any
		param string
	}{
		{map[string]any{"token_url": "http://hooks.example.com/token", "client_id": "a", "client_secret": "b"}, "oauth2.token_url not_https"},
		{map[string]any{"token_url": "https://private.example.com/token", "client_id": "a", "client_secret": "b"}, "oauth2.token_url not_public"},
		{map[string]any{"token_url": "https://hooks.example.com/token", "client_id": "", "client_secret": "b"}, "oauth2.client_id required"},
		{map[string]any{"token_url": "https://hooks.example.com/token", "client_id": "a", "client_secret": "b\nc"}, "oauth2.client_secret invalid_value"},
	} {
		if r := do("PATCH", "/webhook_endpoints/"+id, map[string]any{"oauth2": tc.oauth}); r.Status != 422 || param(r) != tc.param {
			t.Errorf("%v: %d %s (want %s)", tc.oauth, r.Status, r.Raw, tc.param)
		}
	}
	if r := do("PATCH", "/webhook_endpoints/"+id, map[string]any{"oauth2": nil}); r.Status != 200 || r.Body["oauth2"] != nil {
		t.Errorf("remove: %d %s", r.Status, r.Raw)
	}
}

// endpointCaller is a webhook API and a company key that may do everything
// with endpoints: do sends one request with it.
func endpointCaller(t *testing.T) (do func(method, path string, body map[string]any) *httpkit.Response) {
	t.Helper()
	api, _ := webhookAPI(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, webhookPerms...)
	return func(method, path string, body map[string]any) *httpkit.Response {
		t.Helper()
		return api.Do(t, httpkit.Req{Method: method, Path: path, Key: key, Body: body})
	}
}
