package apierr

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestCatalogueIsValid(t *testing.T) {
	t.Parallel()
	if _, err := Parse(catalogueJSON); err != nil {
		t.Fatal(err)
	}
}

// Spec 7: every code has exactly one status and type; the generated Go
// constants and the docs page match catalogue.json.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	t.Parallel()
	src, err := Default.GoConstants()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("codes_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, got) {
		t.Error("codes_gen.go is stale: run go generate ./schema/apierr")
	}
	doc, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Default.Markdown(), doc) {
		t.Error("docs/errors.md is stale: run go generate ./schema/apierr")
	}
}

func TestSpecCodeTable(t *testing.T) {
	t.Parallel()
	// Part 7's table, verbatim.
	want := map[Code][2]any{
		APIKeyInvalid: {401, "authentication_error"}, AccessDenied: {403, "permission_error"},
		PermissionMissing: {403, "permission_error"}, MemberPermissionDenied: {403, "permission_error"},
		MemberSuspended: {403, "permission_error"}, OrganizationSuspended: {403, "permission_error"},
		SubscriptionInactive: {403, "permission_error"}, PlanFeatureUnavailable: {403, "permission_error"},
		PlanLimitReached: {403, "permission_error"}, ResourceNotFound: {404, "invalid_request_error"},
		RouteNotFound: {404, "invalid_request_error"}, InvalidRequest: {400, "invalid_request_error"},
		ValidationFailed: {422, "validation_error"}, Conflict: {409, "conflict_error"},
		IdempotencyKeyReused: {422, "validation_error"}, IdempotencyInProgress: {409, "conflict_error"},
		UnsupportedMediaType: {415, "invalid_request_error"}, RequestTooLarge: {413, "invalid_request_error"},
		RateLimitExceeded: {429, "rate_limit_error"}, RequestFailed: {400, "invalid_request_error"},
		InternalError: {500, "api_error"}, ServiceUnavailable: {503, "api_error"},
	}
	for code, st := range want {
		e, ok := Default.Lookup(code)
		if !ok {
			t.Errorf("%s missing", code)
			continue
		}
		if e.Status != st[0] || e.Type != st[1] {
			t.Errorf("%s = %d %s, want %d %s", code, e.Status, e.Type, st[0], st[1])
		}
	}
}

func TestParseRejectsBrokenCatalogues(t *testing.T) {
	t.Parallel()
	msgs := `{"pt-BR":"a","en":"b","es":"c"}`
	for name, doc := range map[string]string{
		"bad json":           `{`,
		"duplicate code":     fmt.Sprintf(`{"codes":[{"code":"x","status":400,"type":"invalid_request_error","messages":%s},{"code":"x","status":400,"type":"invalid_request_error","messages":%s}]}`, msgs, msgs),
		"status off family":  fmt.Sprintf(`{"codes":[{"code":"x","status":401,"type":"invalid_request_error","messages":%s}]}`, msgs),
		"missing language":   `{"codes":[{"code":"x","status":400,"type":"invalid_request_error","messages":{"en":"b"}}]}`,
		"field without text": `{"field_codes":[{"code":"required","messages":{}}]}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestAcceptLanguageSelectsMessageLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ header, want string }{
		{"", "pt-BR"},
		{"pt-BR", "pt-BR"},
		{"pt", "pt-BR"},
		{"en", "en"},
		{"en-US,en;q=0.9", "en"},
		{"es-MX", "es"},
		{"es;q=0.5, en;q=0.9", "en"},
		{"fr", "pt-BR"},
		{"de-DE, es;q=0.1", "es"},
		{"*", "pt-BR"},
		{";;;q=abc", "pt-BR"},
		{"en;q=0", "pt-BR"},
	} {
		if got := Negotiate(tc.header); got != tc.want {
			t.Errorf("Negotiate(%q) = %s, want %s", tc.header, got, tc.want)
		}
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "en", "pt-BR,pt;q=0.9", "es-419", "*;q=0.1", "x-" + string(make([]byte, 300))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got := Negotiate(h)
		if got != "pt-BR" && got != "en" && got != "es" {
			t.Fatalf("Negotiate(%q) = %q", h, got)
		}
	})
}

func TestEnvelopeCarriesFieldsInLanguage(t *testing.T) {
	t.Parallel()
	var f Fields
	f.Add("client_name", "required")
	f.Add("scheduled_start", "invalid_timestamp")
	err := fmt.Errorf("create: %w", f.Err())
	e := As(err)
	status, body := Default.Envelope(e, "en", "req_1")
	if status != 422 || body.Error.Code != "validation_failed" || body.Error.RequestID != "req_1" {
		t.Fatalf("got %d %+v", status, body)
	}
	if len(body.Error.Errors) != 2 || body.Error.Errors[0].Message != "This field is required." {
		t.Fatalf("errors = %+v", body.Error.Errors)
	}
	if body.Error.DocURL != Default.DocBaseURL+"#validation_failed" {
		t.Errorf("doc_url = %s", body.Error.DocURL)
	}
	if !errors.Is(err, New(ValidationFailed)) {
		t.Error("errors.Is does not match on code")
	}
}

func TestUnknownErrorsBecomeInternal(t *testing.T) {
	t.Parallel()
	e := As(errors.New("boom"))
	status, body := Default.Envelope(e, "es", "")
	if status != 500 || body.Error.Code != "internal_error" || body.Error.Message != "Error interno; reintente más tarde." {
		t.Fatalf("got %d %+v", status, body)
	}
}

// Issue 23 item 2: a client following the doc_url of a 422 refusing a
// private address finds what to do. doc_url points at validation_failed
// in docs/errors.md, which links its field codes; the not_public row links
// "Testing webhooks on your machine" in docs/api.md, which exists; and the
// message itself names the development setting, in every language.
func TestNotPublicLeadsToTestingWebhooksOnYourMachine(t *testing.T) {
	t.Parallel()
	v, ok := Default.Lookup(ValidationFailed)
	if !ok || v.See == nil || v.See.Href != "#field-codes" {
		t.Fatalf("validation_failed links no field codes: %+v", v)
	}
	f, ok := Default.Field("not_public")
	if !ok || f.See == nil || f.See.Href != "api.md#testing-webhooks-on-your-machine" {
		t.Fatalf("not_public links nowhere: %+v", f)
	}
	for _, l := range Languages {
		if !strings.Contains(f.Messages[l], "OFICINA_ALLOW_PRIVATE_DESTINATIONS") {
			t.Errorf("the %s message does not name the development setting: %s", l, f.Messages[l])
		}
	}
	errorsPage, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n## Field codes\n", "See [the field codes](#field-codes).",
		"| `not_public` | " + f.Messages["en"] + " | [Testing webhooks on your machine](api.md#testing-webhooks-on-your-machine) |"} {
		if !strings.Contains(string(errorsPage), want) {
			t.Errorf("docs/errors.md lacks %q", want)
		}
	}
	apiPage, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(apiPage), "\n## Testing webhooks on your machine\n") {
		t.Error("docs/api.md has no section Testing webhooks on your machine")
	}
}
