package public_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"oficina/http/public"
	"oficina/http/wire"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// writeRoutes lists every route that takes a body, from the OpenAPI
// document, so routes added later are covered without touching this test.
func writeRoutes(t *testing.T, s *public.Server) [][2]string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	var out [][2]string
	for path, ops := range doc.Paths {
		for method := range ops {
			if m := strings.ToUpper(method); m == "POST" || m == "PATCH" || m == "PUT" {
				out = append(out, [2]string{m, param.ReplaceAllString(strings.TrimPrefix(path, public.Prefix), "x_0")})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1]+out[i][0] < out[j][1]+out[j][0] })
	return out
}

// Spec 4.1 and part 8: on every route with a body, a body that is not JSON
// is 415 and a body above 1 MB is 413, before any work — before the
// handler, and before an Idempotency-Key is looked at (nothing is stored:
// the same key then runs normally).
func TestBodyRulesApplyToEveryWriteRoute(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	e := &idemEnv{api: api, writes: public.RegisterTestWrites(api.Public)}
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, tenant.AllPermissions()...)
	routes := writeRoutes(t, api.Public)
	if len(routes) == 0 {
		t.Fatal("no write routes")
	}
	big := bytes.Repeat([]byte(" "), wire.MaxBody+1)
	for _, rt := range routes {
		for _, tc := range []struct {
			name, ctype string
			body        []byte
			status      int
			code        string
		}{
			{"form", "application/x-www-form-urlencoded", []byte("a=1"), 415, "unsupported_media_type"},
			{"text", "text/plain", []byte("{}"), 415, "unsupported_media_type"},
			{"multipart", "multipart/form-data; boundary=x", []byte("--x--"), 415, "unsupported_media_type"},
			{"above 1 MB", "application/json", big, 413, "request_too_large"},
		} {
			req, err := http.NewRequest(rt[0], api.URL+public.Prefix+rt[1], bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", tc.ctype)
			req.Header.Set(public.IdempotencyHeader, "body-rules")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var env struct{ Error struct{ Code string } }
			_ = json.NewDecoder(resp.Body).Decode(&env)
			resp.Body.Close()
			if resp.StatusCode != tc.status || env.Error.Code != tc.code {
				t.Errorf("%s %s, %s: %d %s", rt[0], rt[1], tc.name, resp.StatusCode, env.Error.Code)
			}
		}
	}
	t.Logf("%d routes with a body", len(routes))
	// A body sent without a length is cut at 1 MB while it is read for the
	// idempotency fingerprint.
	req, err := http.NewRequest("POST", api.URL+public.Prefix+"/test_writes", io.MultiReader(bytes.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(public.IdempotencyHeader, "chunked")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || req.ContentLength != 0 {
		t.Fatalf("chunked body above 1 MB: %d (length %d)", resp.StatusCode, req.ContentLength)
	}
	e.co, e.key = co, key
	if r := e.post(t, "body-rules", map[string]any{"name": "After 415 Ltd"}); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the key was stored by a refused body: %d %s", r.Status, r.Raw)
	}
}
