package public_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"oficina/http/public"
	"oficina/schema/webhooks"
)

// The OpenAPI document is generated from the routes, is a valid OpenAPI
// 3.1 document, and docs/openapi.json is the current one (make openapi).
func TestOpenAPIDocumentIsGeneratedAndCurrent(t *testing.T) {
	t.Parallel()
	doc, raw := loadDocument(t)
	if err := doc.Validate(context.Background()); err != nil {
		t.Errorf("the document is not valid OpenAPI 3.1: %v", err)
	}
	for _, p := range []string{"/public/v1/me", "/public/v1/team", "/public/v1/service_order_types"} {
		if doc.Paths.Find(p) == nil || doc.Paths.Find(p).Get == nil {
			t.Errorf("path %s missing", p)
		}
	}
	onDisk, err := os.ReadFile("../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(onDisk), bytes.TrimSpace(raw)) {
		t.Error("docs/openapi.json is stale: run make openapi")
	}
}

// The document's bounds are the server's: grace_period_seconds takes 0 to
// MaxSecretGrace, as rotate_secret checks.
func TestDocumentedBoundsAreTheServers(t *testing.T) {
	t.Parallel()
	doc, _ := loadDocument(t)
	g := doc.Components.Schemas["WebhookSecretRotation"].Value.Properties["grace_period_seconds"].Value
	if g.Min == nil || *g.Min != 0 || g.Max == nil || *g.Max != webhooks.MaxSecretGrace.Seconds() {
		t.Errorf("grace_period_seconds bounds %v..%v, the server takes 0..%v", g.Min, g.Max, webhooks.MaxSecretGrace.Seconds())
	}
}

// Issue 23 item 6: the document's server defaults to what `make run`
// serves (http://localhost:8080), so a generated client works against it
// out of the box; https stays listed for production.
func TestServerDefaultsToWhatMakeRunServes(t *testing.T) {
	t.Parallel()
	doc, _ := loadDocument(t)
	if len(doc.Servers) != 1 {
		t.Fatalf("servers: %d", len(doc.Servers))
	}
	srv := doc.Servers[0]
	url := srv.URL
	for name, v := range srv.Variables {
		url = strings.ReplaceAll(url, "{"+name+"}", v.Default)
	}
	if url != "http://localhost:8080" {
		t.Errorf("the default server is %s, want make run's http://localhost:8080", url)
	}
	if scheme := srv.Variables["scheme"]; scheme == nil || !slices.Contains(scheme.Enum, "https") {
		t.Errorf("https is not offered: %+v", scheme)
	}
}

// loadDocument builds the server's OpenAPI document and loads it; raw is
// the document as served.
func loadDocument(t *testing.T) (doc *openapi3.T, raw []byte) {
	t.Helper()
	s, err := public.New(public.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	raw = s.OpenAPI()
	doc, err = openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	return doc, raw
}

// Building the API leaves the process's default logger alone: the causes
// of 5xx answers (logged by http/wire through it) reach the operator's
// log, with no start-up step putting it back.
func TestBuildingTheAPIKeepsTheProcessLogger(t *testing.T) {
	before := slog.Default()
	if _, err := public.New(public.Deps{}); err != nil {
		t.Fatal(err)
	}
	if slog.Default() != before {
		t.Fatal("public.New replaced the default logger")
	}
}

// Every request and answer of the document is JSON, but the event
// stream's: the linter's JSON-only rule allows text/event-stream, and this
// keeps it to that one answer.
func TestOnlyTheEventStreamAnswersOtherThanJSON(t *testing.T) {
	doc, _ := loadDocument(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody != nil {
				for ct := range op.RequestBody.Value.Content {
					if ct != "application/json" {
						t.Errorf("%s %s takes %s", method, path, ct)
					}
				}
			}
			for status, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for ct := range r.Value.Content {
					stream := path == "/public/v1/events/stream" && method == "GET" && status == "200"
					if ct != "application/json" && !(stream && ct == "text/event-stream") {
						t.Errorf("%s %s answers %s with %s", method, path, status, ct)
					}
				}
			}
		}
	}
}
