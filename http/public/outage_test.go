package public_test

import (
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// outageLeak is what a 503 must never show: the driver's message with the
// role, the database and the address it tried.
var outageLeak = []string{"oficina_app", "oficina_test", "127.0.0.1", "failed to connect", "dial", "refused"}

func wantUnavailable(t *testing.T, label string, r *httpkit.Response) {
	t.Helper()
	e, _ := r.Body["error"].(map[string]any)
	if r.Status != 503 || r.ErrorCode() != "service_unavailable" || e["type"] != "api_error" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("%s: %d %q Retry-After %q, want 503 service_unavailable (api_error) with Retry-After\n%s", label, r.Status,
			r.ErrorCode(), r.Header.Get("Retry-After"), r.Raw)
	}
	for _, s := range outageLeak {
		if strings.Contains(string(r.Raw), s) {
			t.Fatalf("%s: the answer shows %q: %s", label, s, r.Raw)
		}
	}
}

// Spec 7 (api_error 503) and issue 15 item 6: while PostgreSQL cannot be
// reached every request answers 503 service_unavailable with Retry-After —
// whether it failed looking up the key, in a write, in an idempotent write
// or on the admin API — with nothing of the driver's message; once the
// database is back the same requests succeed, an idempotent one with the
// same key included (nothing was stored).
func TestDatabaseOutageAnswers503WithRetryAfter(t *testing.T) {
	t.Parallel()
	pool, db := testkit.ProxiedDB(t)
	api := httpkit.NewAPI(t, httpkit.APIOptions{DB: pool})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	cached := co.OwnerKey(t, "leads:create", "team:read")
	uncached := co.OwnerKey(t, "team:read")
	if r := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: cached}); r.Status != 200 {
		t.Fatalf("before the outage: %d %s", r.Status, r.Raw)
	}
	lead := map[string]any{"name": "Ana", "email": "ana@example.com", "task": nil}
	idem := map[string]string{"Idempotency-Key": "outage-1"}

	db.Cut()
	wantUnavailable(t, "key lookup", api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: uncached}))
	wantUnavailable(t, "write", api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: cached, Body: lead}))
	wantUnavailable(t, "idempotent write", api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: cached, Body: lead, Header: idem}))
	wantUnavailable(t, "admin", api.Admin(t, "GET", "/companies/"+co.Company.ID, nil))

	if err := db.Restore(); err != nil {
		t.Fatal(err)
	}
	if r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: cached, Body: lead, Header: idem}); r.Status != 201 {
		t.Fatalf("idempotent write retried after the outage: %d %s", r.Status, r.Raw)
	}
	if r := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: uncached}); r.Status != 200 {
		t.Fatalf("key lookup after the outage: %d %s", r.Status, r.Raw)
	}
}
