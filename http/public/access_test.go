package public_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/apierr"
	"oficina/schema/orders"
	"oficina/tenant"
)

// Part 5.2: each refusal has its code, over HTTP.
func TestEvery403CodeOverHTTP(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	viewer := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleViewer)})
	free := testkit.NewCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(tenant.PlanStart)})
	freeKey := free.OwnerKey(t, "service_orders:read")
	api.Admin(t, "PATCH", "/companies/"+free.Company.ID, map[string]any{"plan": "free"})
	off := testkit.NewCompany(t, tenant.CompanyInput{APIEnabled: testkit.Ptr(false)})
	pastDue := testkit.NewCompany(t, tenant.CompanyInput{SubscriptionStatus: testkit.Ptr("past_due")})

	for _, tc := range []struct {
		name, key, path, code string
	}{
		{"key lacks permission", co.OwnerKey(t, "team:read"), "/service_order_types", "permission_missing"},
		{"member role refuses", co.Key(t, viewer, "service_orders:read").Secret, "/service_order_types", "member_permission_denied"},
		{"plan without API (Free)", freeKey, "/service_order_types", "plan_feature_unavailable"},
		{"plan without API (GET /me too)", freeKey, "/me", "plan_feature_unavailable"},
		{"API turned off", off.OwnerKey(t, "service_orders:read"), "/service_order_types", "plan_feature_unavailable"},
		{"subscription not in good standing", pastDue.OwnerKey(t, "service_orders:read"), "/service_order_types", "subscription_inactive"},
	} {
		r := api.Do(t, httpkit.Req{Method: "GET", Path: tc.path, Key: tc.key})
		if r.Status != 403 || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
		if e := r.Body["error"].(map[string]any); e["type"] != "permission_error" {
			t.Errorf("%s: type %v", tc.name, e["type"])
		}
	}
}

// Part 8: active keys per plan; revoked and expired keys do not count, a key
// in its grace period does; rotating is never refused.
func TestActiveKeyLimitPerPlan(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(tenant.PlanStart)})
	create := func() *httpkit.Response {
		return api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys",
			map[string]any{"member_id": co.Owner.ID, "permissions": []string{"team:read"}})
	}
	var ids []string
	for i := 0; i < 3; i++ {
		r := create()
		if r.Status != 201 {
			t.Fatalf("key %d: %d %s", i, r.Status, r.Raw)
		}
		if r.Body["secret"] == nil || strings.Contains(string(r.Raw), "secret_hash") {
			t.Fatalf("secret shown wrongly: %s", r.Raw)
		}
		ids = append(ids, r.Body["id"].(string))
	}
	if r := create(); r.Status != 403 || r.ErrorCode() != "plan_limit_reached" {
		t.Fatalf("4th key: %d %s", r.Status, r.Raw)
	}
	// Rotation with grace: the old key still counts, and rotating is allowed at the limit.
	if r := api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys/"+ids[0]+"/rotate", map[string]any{"grace_period_seconds": 60}); r.Status != 200 {
		t.Fatalf("rotate at limit: %d %s", r.Status, r.Raw)
	}
	if r := create(); r.Status != 403 {
		t.Fatalf("grace key did not count: %d", r.Status)
	}
	// Revoked keys stop counting.
	api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys/"+ids[1]+"/revoke", map[string]any{})
	api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys/"+ids[2]+"/revoke", map[string]any{})
	if r := create(); r.Status != 201 {
		t.Fatalf("after revokes: %d %s", r.Status, r.Raw)
	}
	// Expired keys stop counting (the old rotated key expires with the clock).
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		n, err := tenant.CountActiveKeys(ctx, tx, time.Now().Add(2*time.Minute))
		if err == nil && n != 2 {
			err = fmt.Errorf("active after grace = %d, want 2", n)
		}
		return err
	})
}

// Part 5 item 4: a key is never created acting above its creator's role.
func TestKeyCannotActAboveItsCreator(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	member := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember)})
	r := api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys",
		map[string]any{"member_id": co.Owner.ID, "created_by": member.ID, "permissions": []string{"team:read"}})
	if r.Status != 403 || r.ErrorCode() != "member_permission_denied" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
}

// Part 2.2: GET /me.
func TestMeReportsOrganizationKeyAndLimits(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(tenant.PlanPleno), Timezone: testkit.Ptr("America/Manaus"), Currency: testkit.Ptr("USD")})
	exp := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	k := co.KeyWith(t, tenant.KeyInput{MemberID: co.Owner.ID, Permissions: []string{"sales:read", "leads:write"}, ExpiresAt: &exp})
	r := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: k.Secret})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	org := r.Body["organization"].(map[string]any)
	key := r.Body["key"].(map[string]any)
	lim := r.Body["limits"].(map[string]any)
	if org["timezone"] != "America/Manaus" || org["currency"] != "USD" || org["name"] != co.Company.Name {
		t.Errorf("organization %v", org)
	}
	if key["expires_at"] != exp.Format("2006-01-02T15:04:05Z") {
		t.Errorf("expires_at %v", key["expires_at"])
	}
	if p := key["permissions"].([]any); len(p) != 2 || p[0] != "leads:write" || p[1] != "sales:read" {
		t.Errorf("permissions %v", p)
	}
	if lim["requests_per_minute"] != float64(180) {
		t.Errorf("limits %v", lim)
	}
	// Override and no ceiling.
	api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_override": 1000})
	r = api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: k.Secret})
	if r.Body["limits"].(map[string]any)["requests_per_minute"] != float64(1000) {
		t.Errorf("override: %s", r.Raw)
	}
	api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_unlimited": true})
	r = api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: k.Secret})
	if v, ok := r.Body["limits"].(map[string]any)["requests_per_minute"]; !ok || v != nil {
		t.Errorf("no ceiling must be null: %s", r.Raw)
	}
}

// Part 5.3: GET /team is trimmed by the member's permissions, never refused.
func TestTeamIsFilteredByMemberPermissions(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	for _, typ := range []string{tenant.TypeTechnician, tenant.TypeSeller, tenant.TypeAssistant} {
		co.Member(t, tenant.MemberInput{Name: testkit.Ptr(typ), Type: testkit.Ptr(typ)})
	}
	types := func(key string) map[string]int {
		r := api.Do(t, httpkit.Req{Method: "GET", Path: "/team", Key: key})
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		out := map[string]int{}
		for _, m := range r.Body["data"].([]any) {
			out[m.(map[string]any)["type"].(string)]++
		}
		return out
	}
	if got := types(co.OwnerKey(t, "team:read")); got[tenant.TypeTechnician] != 1 || got[tenant.TypeSeller] != 1 || got[tenant.TypeAssistant] != 1 || got[tenant.TypeOrgMember] < 1 {
		t.Errorf("owner sees %v", got)
	}
	tech := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Type: testkit.Ptr(tenant.TypeTechnician),
		Permissions: &tenant.MemberPermissions{"technicians": {"read"}}})
	if got := types(co.Key(t, tech, "team:read").Secret); len(got) != 1 || got[tenant.TypeTechnician] != 2 {
		t.Errorf("technicians-only member sees %v", got)
	}
	nobody := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleViewer)})
	if got := types(co.Key(t, nobody, "team:read").Secret); len(got) != 0 {
		t.Errorf("member without permissions sees %v", got)
	}
	seller := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Permissions: &tenant.MemberPermissions{"sales": {"read"}, "tasks": {"read"}}})
	if got := types(co.Key(t, seller, "team:read").Secret); got[tenant.TypeSeller] != 1 || got[tenant.TypeAssistant] != 1 || got[tenant.TypeTechnician] != 0 {
		t.Errorf("sales+tasks member sees %v", got)
	}
}

// Part 4.1 lists and the pagination decision in docs/api.md.
func TestServiceOrderTypesListAndPagination(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		for i := 0; i < 5; i++ {
			if _, err := orders.CreateType(ctx, tx, co.Company.ID, orders.ServiceOrderTypeCreate{Name: testkit.Ptr(fmt.Sprint("T", i)), RequiredOnCreate: testkit.Ptr(i == 0)}, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	key := co.OwnerKey(t, "service_orders:read")
	seen := map[string]bool{}
	after := ""
	for pages := 0; ; pages++ {
		path := "/service_order_types?limit=2"
		if after != "" {
			path += "&starting_after=" + after
		}
		r := api.Do(t, httpkit.Req{Method: "GET", Path: path, Key: key})
		if r.Status != 200 || r.Body["object"] != "list" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		data := r.Body["data"].([]any)
		for _, d := range data {
			m := d.(map[string]any)
			for _, f := range []string{"id", "name", "active", "required_on_create"} {
				if _, ok := m[f]; !ok {
					t.Fatalf("field %s missing: %v", f, m)
				}
			}
			seen[m["id"].(string)] = true
			after = m["id"].(string)
		}
		if r.Body["has_more"] != true {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if len(seen) != 5 {
		t.Fatalf("saw %d types", len(seen))
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=abc", "limit=-1", "limit=1&limit=2", "starting_after="} {
		r := api.Do(t, httpkit.Req{Method: "GET", Path: "/service_order_types?" + q, Key: key})
		if r.Status != 400 || r.ErrorCode() != "invalid_request" {
			t.Errorf("%s: %d %s", q, r.Status, r.Raw)
		}
	}
	// Another company sees none of them.
	other := testkit.NewCompany(t, tenant.CompanyInput{})
	r := api.Do(t, httpkit.Req{Method: "GET", Path: "/service_order_types", Key: other.OwnerKey(t, "service_orders:read")})
	if n := len(r.Body["data"].([]any)); n != 0 {
		t.Fatalf("other company sees %d types", n)
	}
}

// Part 7: unknown paths, wrong methods and paths outside the prefix.
func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	r := api.Do(t, httpkit.Req{Method: "GET", Path: "/nope"})
	if r.Status != 404 || r.ErrorCode() != "route_not_found" || r.Header.Get("Request-Id") == "" {
		t.Fatalf("unknown path: %d %s", r.Status, r.Raw)
	}
	r = api.Do(t, httpkit.Req{Method: "DELETE", Path: "/me"})
	if r.Status != 405 || r.ErrorCode() != "method_not_allowed" || r.Header.Get("Allow") != "GET" {
		t.Fatalf("wrong method: %d %v %s", r.Status, r.Header, r.Raw)
	}
	// Unknown route is answered before authentication.
	r = api.Do(t, httpkit.Req{Method: "GET", Path: "/finance/x", Key: "garbage"})
	if r.Status != 404 {
		t.Fatalf("unpublished area: %d", r.Status)
	}
}

// Issue 23 item 6: the path of a route without wildcards, called with
// another method, is 405 method_not_allowed naming that route's method —
// never an id of the wildcard route beside it (GET /service_orders/{id}
// answered 404 resource_not_found for /service_orders/from_quote).
func TestWrongMethodOnALiteralPathIs405NotAnID(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	for _, m := range []string{"GET", "PATCH"} {
		r := api.Do(t, httpkit.Req{Method: m, Path: "/service_orders/from_quote"})
		if r.Status != 405 || r.ErrorCode() != "method_not_allowed" || r.Header.Get("Allow") != "POST" {
			t.Errorf("%s /service_orders/from_quote: %d %v %s", m, r.Status, r.Header, r.Raw)
		}
	}
	// An id in the same place is still the order's route.
	r := api.Do(t, httpkit.Req{Method: "GET", Path: "/service_orders/so_01m80xxst6jzjf9e2f6wtgqx92"})
	if r.Status != 401 {
		t.Errorf("GET /service_orders/{id} without a key: %d %s", r.Status, r.Raw)
	}
}

// Part 4.1: Accept-Language selects the message language.
func TestMessagesFollowAcceptLanguage(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	for lang, want := range map[string]string{"": "Chave de API inválida.", "en-US": "Invalid API key.", "es": "Clave de API no válida.", "pt-BR": "Chave de API inválida."} {
		r := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: map[string]string{"Accept-Language": lang}})
		if msg := r.Body["error"].(map[string]any)["message"]; msg != want {
			t.Errorf("%q: %v", lang, msg)
		}
	}
}

type panicGuard struct{}

func (panicGuard) Check(http.ResponseWriter, *http.Request, *tenant.Principal) error { panic("boom") }

// Part 7: a panic is a 500 internal_error in the envelope.
func TestPanicsBecomeInternalError(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{Guard: panicGuard{}})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	r := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: co.OwnerKey(t, "team:read")})
	if r.Status != 500 || r.ErrorCode() != "internal_error" || r.Body["error"].(map[string]any)["request_id"] != r.Header.Get("Request-Id") {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
}

// Nothing half-written: a panic inside the company transaction rolls back.
func TestPanicInsideTransactionWritesNothing(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	func() {
		defer func() { _ = recover() }()
		_ = tenant.Tx(context.Background(), co.DB, co.Company.ID, func(ctx context.Context, tx bun.Tx) error {
			if _, err := orders.CreateType(ctx, tx, co.Company.ID, orders.ServiceOrderTypeCreate{Name: testkit.Ptr("ghost")}, time.Now()); err != nil {
				return err
			}
			panic("mid-write")
		})
	}()
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		n, err := tx.NewSelect().Model((*orders.TypeRow)(nil)).Count(ctx)
		if err == nil && n != 0 {
			err = errors.New("half-written type survived the panic")
		}
		return err
	})
}

// Tenancy: an id of another company is 404, never 403 (admin API too).
func TestIDsOfAnotherCompanyAre404(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	r := api.Admin(t, "GET", "/companies/"+b.Company.ID+"/members/"+a.Owner.ID, nil)
	if r.Status != 404 || r.ErrorCode() != "resource_not_found" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	r = api.Admin(t, "PATCH", "/companies/"+b.Company.ID+"/members/"+a.Owner.ID, map[string]any{"role": "VIEWER"})
	if r.Status != 404 {
		t.Fatalf("patch across companies: %d %s", r.Status, r.Raw)
	}
	r = api.Admin(t, "GET", "/companies/co_doesnotexist/members", nil)
	if r.Status != 404 {
		t.Fatalf("unknown company: %d %s", r.Status, r.Raw)
	}
}

// Part 7 for bodies: broken JSON 400, non-JSON 415, over 1 MB 413, invalid
// fields 422 naming them (the admin API shares the public decoder).
func TestBodyRules(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	for _, tc := range []struct {
		name, ct string
		body     string
		status   int
		code     string
	}{
		{"broken json", "application/json", `{"name":`, 400, "invalid_request"},
		{"not an object", "application/json", `[1,2]`, 400, "invalid_request"},
		{"trailing data", "application/json", `{"name":"x"} {}`, 400, "invalid_request"},
		{"invalid utf-8", "application/json", "{\"name\":\"\xff\"}", 400, "invalid_request"},
		{"form", "application/x-www-form-urlencoded", `name=x`, 415, "unsupported_media_type"},
		{"text", "text/plain", `hello`, 415, "unsupported_media_type"},
		{"multipart", "multipart/form-data; boundary=x", `--x--`, 415, "unsupported_media_type"},
		{"too large", "application/json", `{"name":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "request_too_large"},
		{"wrong type", "application/json", `{"name": 5}`, 422, "validation_failed"},
		{"unknown field", "application/json", `{"name":"x","nmae":"y"}`, 422, "validation_failed"},
		{"duplicate key", "application/json", `{"name":"x","name":"y"}`, 422, "validation_failed"},
	} {
		req, _ := http.NewRequest("POST", api.AdminURL+"/admin/v1/companies", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.ct)
		req.Header.Set("Authorization", "Bearer "+api.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var env apierr.Body
		_ = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(env.Error.Code) != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, resp.StatusCode, env.Error.Code, tc.status, tc.code)
		}
	}
}
