package public_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/dispatch/destguard"
	"oficina/ops/testkit"
	"oficina/schema/mail"
	"oficina/streams"
	"oficina/streams/jsconfig"
)

// dns answers the webhook tests' host names without the network.
type dns map[string][]string

func (d dns) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := d[strings.TrimSuffix(host, ".")]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range addrs {
		a := netip.MustParseAddr(s)
		if network == "ip4" && !a.Is4() || network == "ip6" && a.Is4() {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// testDNS: hooks.example.com is public; the others break a rule of 6.5.
var testDNS = dns{
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
func webhookAPI(t *testing.T) (*testkit.API, jetstream.JetStream) {
	t.Helper()
	guard, err := destguard.New(destguard.Config{Resolver: testDNS})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := testkit.NATS(t).Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsconfig.Ensure(context.Background(), js, jsconfig.Config{}); err != nil {
		t.Fatal(err)
	}
	api := testkit.NewAPI(t, testkit.APIOptions{Destinations: guard,
		Publisher: streams.NewPublisher(testkit.DB(t), js, nil)})
	return api, js
}

func createEndpoint(t *testing.T, api *testkit.API, key string, events ...string) *testkit.Response {
	t.Helper()
	return api.Do(t, testkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key,
		Body: map[string]any{"url": hookURL, "description": "ERP", "events": events}})
}

// mustEndpoint creates an endpoint and returns its id.
func mustEndpoint(t *testing.T, api *testkit.API, key string, events ...string) string {
	t.Helper()
	r := createEndpoint(t, api, key, events...)
	if r.Status != 201 {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Raw)
	}
	return r.Body["id"].(string)
}

// param is errors[0].param of a 422.
func param(r *testkit.Response) string {
	e, _ := r.Body["error"].(map[string]any)
	errs, _ := e["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	return errs[0].(map[string]any)["param"].(string) + " " + errs[0].(map[string]any)["code"].(string)
}

// mails are the company's outbox messages of a kind, newest first.
func mails(t *testing.T, co *testkit.Company, kind string) []mail.Message {
	t.Helper()
	var out []mail.Message
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		ms, err := mail.List(ctx, tx, 100)
		for _, m := range ms {
			if m.Kind == kind {
				out = append(out, m)
			}
		}
		return err
	})
	return out
}
