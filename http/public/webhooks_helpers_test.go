package public_test

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/dispatch/destguard"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
)

// testDNS: hooks.example.com is public; the others break a rule of 6.5.
var testDNS = testkit.DNS{
	"hooks.example.com":   {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
	"other.example.net":   {"93.184.215.15"},
	"private.example.com": {"10.1.2.3"},
	"mixed.example.com":   {"93.184.215.14", "127.0.0.1"},
	"meta.example.com":    {"169.254.169.254"},
}

const hookURL = "https://hooks.example.com/oficina"

// allReads are the read permissions of every module with events.
var allReads = []string{"clients:read", "finance:read", "products:read", "quotes:read", "sales:read",
	"service_orders:read", "services:read", "tasks:read"}

// webhookPerms is a key that may do everything with webhooks.
var webhookPerms = append([]string{"webhooks:create", "webhooks:read", "webhooks:update", "webhooks:delete"}, allReads...)

// webhookAPI is the API with the test resolver and a publisher on an
// embedded JetStream.
func webhookAPI(t *testing.T) (*httpkit.API, jetstream.JetStream) {
	t.Helper()
	guard, err := destguard.New(destguard.Config{Resolver: testDNS})
	if err != nil {
		t.Fatal(err)
	}
	js := testkit.JetStream(t, jsconfig.Config{})
	api := httpkit.NewAPI(t, httpkit.APIOptions{Destinations: guard,
		Publisher: streams.NewPublisher(testkit.DB(t), js, nil)})
	return api, js
}

func createEndpoint(t *testing.T, api *httpkit.API, key string, events ...string) *httpkit.Response {
	t.Helper()
	return api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key,
		Body: map[string]any{"url": hookURL, "description": "ERP", "events": events}})
}

// mustEndpoint creates an endpoint and returns its id.
func mustEndpoint(t *testing.T, api *httpkit.API, key string, events ...string) string {
	t.Helper()
	r := createEndpoint(t, api, key, events...)
	if r.Status != 201 {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Raw)
	}
	return r.Body["id"].(string)
}

// param is errors[0].param of a 422.
func param(r *httpkit.Response) string {
	e, _ := r.Body["error"].(map[string]any)
	errs, _ := e["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	return errs[0].(map[string]any)["param"].(string) + " " + errs[0].(map[string]any)["code"].(string)
}
