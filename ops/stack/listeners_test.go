package stack

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"oficina/http/admin"
	"oficina/http/public"
	"oficina/ops/metrics"
	"oficina/ops/testkit"
	"oficina/schema/apierr"
	"oficina/schema/service"
	"oficina/tenant"
)

// Spec 7: every error has the same body on any route and status, its
// message in the Accept-Language language (pt-BR default, en, es) — on
// every listener, not only under /public/v1: unknown paths (404
// route_not_found, without request_id outside /public/v1), known paths
// with another method (405 method_not_allowed with Allow), 401s and the
// health endpoints' 503s. (GET /foo with Accept-Language: en answered in
// Portuguese; ServeMux's 404 and 405 were plain English text.)
func TestEveryErrorOnEveryListenerFollowsAcceptLanguage(t *testing.T) {
	t.Parallel()
	d := testkit.DB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &Stack{db: d, log: log}
	auth := tenant.NewAuthenticator(d, tenant.AuthConfig{})
	pub, err := public.New(public.Deps{Base: service.Base{Log: log}, DB: d, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	const token = "listener-test-token-0123456789abcdef"
	pubSrv := httptest.NewServer(s.publicHandler(pub, http.NotFoundHandler()))
	admSrv := httptest.NewServer(s.adminHandler(admin.New(admin.Deps{Base: service.Base{Log: log}, DB: d, Token: token}), metrics.New(), false))
	t.Cleanup(pubSrv.Close)
	t.Cleanup(admSrv.Close)

	type errCase struct {
		name, method, url, auth string
		status                  int
		code                    apierr.Code
		allow                   string
	}
	pubURL, admURL := pubSrv.URL, admSrv.URL
	cases := []errCase{
		{"public: unknown path", "GET", pubURL + "/foo", "", 404, apierr.RouteNotFound, ""},
		{"public: root", "GET", pubURL + "/", "", 404, apierr.RouteNotFound, ""},
		{"public: /openapi.json with POST", "POST", pubURL + "/openapi.json", "", 405, apierr.MethodNotAllowed, "GET, HEAD"},
		{"public: /docs/ with DELETE", "DELETE", pubURL + "/docs/", "", 405, apierr.MethodNotAllowed, "GET, HEAD"},
		{"public: /favicon.ico with POST", "POST", pubURL + "/favicon.ico", "", 405, apierr.MethodNotAllowed, "GET, HEAD"},
		{"public: /healthz with POST", "POST", pubURL + "/healthz", "", 405, apierr.MethodNotAllowed, "GET, HEAD"},
		{"public: /healthz while starting", "GET", pubURL + "/healthz", "", 503, apierr.ServiceUnavailable, ""},
		{"public: /readyz while starting", "GET", pubURL + "/readyz", "", 503, apierr.ServiceUnavailable, ""},
		{"public API: unknown path", "GET", pubURL + "/public/v1/foo", "", 404, apierr.RouteNotFound, ""},
		{"public API: another method", "DELETE", pubURL + "/public/v1/me", "", 405, apierr.MethodNotAllowed, "GET"},
		{"public API: no key", "GET", pubURL + "/public/v1/me", "", 401, apierr.APIKeyInvalid, ""},
		{"admin: unknown path", "GET", admURL + "/foo", "", 404, apierr.RouteNotFound, ""},
		{"admin: /metrics with POST", "POST", admURL + "/metrics", "", 405, apierr.MethodNotAllowed, "GET, HEAD"},
		{"admin: /readyz while starting", "GET", admURL + "/readyz", "", 503, apierr.ServiceUnavailable, ""},
		{"admin API: no token", "GET", admURL + "/admin/v1/companies/x", "", 401, apierr.APIKeyInvalid, ""},
		{"admin API: unknown path", "GET", admURL + "/admin/v1/nope", token, 404, apierr.RouteNotFound, ""},
		{"admin API: another method", "DELETE", admURL + "/admin/v1/companies", token, 405, apierr.MethodNotAllowed, "POST"},
	}
	for _, tc := range cases {
		entry, ok := apierr.Default.Lookup(tc.code)
		if !ok {
			t.Fatalf("%s not catalogued", tc.code)
		}
		for _, lang := range []struct{ header, want string }{{"", "pt-BR"}, {"en", "en"}, {"es-MX,es;q=0.9", "es"}, {"fr", "pt-BR"}} {
			req, err := http.NewRequest(tc.method, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if lang.header != "" {
				req.Header.Set("Accept-Language", lang.header)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", "Bearer "+tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var body apierr.Body
			_ = json.Unmarshal(raw, &body)
			e := body.Error
			inAPI := strings.Contains(tc.url, "/public/v1/")
			switch {
			case resp.StatusCode != tc.status || e.Code != tc.code || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"):
				t.Errorf("%s (%s): %d %s %s, want %d %s", tc.name, lang.want, resp.StatusCode, resp.Header.Get("Content-Type"), raw, tc.status, tc.code)
			case e.Message != entry.Messages[lang.want]:
				t.Errorf("%s, Accept-Language %q: message %q, want the %s one %q", tc.name, lang.header, e.Message, lang.want, entry.Messages[lang.want])
			case resp.Header.Get("Allow") != tc.allow:
				t.Errorf("%s: Allow %q, want %q", tc.name, resp.Header.Get("Allow"), tc.allow)
			case inAPI != (e.RequestID != ""):
				t.Errorf("%s: request_id %q (in /public/v1: %v)", tc.name, e.RequestID, inAPI)
			}
		}
	}

	// Once ready, the health endpoints answer.
	s.ready.Store(true)
	for _, u := range []string{pubURL + "/healthz", pubURL + "/readyz", admURL + "/healthz", admURL + "/readyz"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d once ready", u, resp.StatusCode)
		}
	}
}
