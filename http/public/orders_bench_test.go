package public_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/http/public"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// benchCompany is a company ready for the benchmark: a key, a technician,
// one endpoint subscribed to service_order.* and an automatic checklist.
type benchCompany struct {
	key, body string
}

func newBenchCompany(b *testing.B, api *httpkit.API) benchCompany {
	co := testkit.NewCompany(b, tenant.CompanyInput{})
	key := co.OwnerKey(b, "service_orders:create")
	tech := co.Member(b, tenant.MemberInput{Name: testkit.Ptr("Tech"), Type: testkit.Ptr(tenant.TypeTechnician)})
	co.Tx(b, func(ctx context.Context, tx bun.Tx) error {
		_, err := webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/oficina",
			Events: []webhooks.EventName{"service_order.*"}}, webhooks.Subscriber{MemberID: co.Owner.ID},
			func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(b), time.Now())
		return err
	})
	if r := api.Admin(b, "POST", "/companies/"+co.Company.ID+"/service_order_checklists", map[string]any{"name": "Padrão",
		"items": []map[string]any{{"description": "EPI", "required": true}}}); r.Status != http.StatusCreated {
		b.Fatalf("checklist: %d %s", r.Status, r.Raw)
	}
	body := fmt.Sprintf(`{"client_name":"Cliente","technician_id":%q,"priority":"high","items":[`+
		`{"description":"Visita","quantity":1,"unit_price_cents":15000,"total_cents":15000}]}`, tech.ID)
	return benchCompany{key: key, body: body}
}

// BenchmarkCreateServiceOrder measures POST /service_orders from 32
// concurrent clients over real HTTP and PostgreSQL. Each company has one
// endpoint subscribed to service_order.*, so each creation writes the quota
// and number counters, the order with a technician and an automatic
// checklist, the service_order.created event and its delivery row.
// companies=32 spreads the clients over 32 companies (the platform's
// throughput); companies=1 puts them all on one company, whose gapless
// numbering serialises creations up to each commit's WAL flush. Reports
// orders/s and p50/p99 latency; nothing asserts on time.
func BenchmarkCreateServiceOrder(b *testing.B) {
	for _, n := range []int{32, 1} {
		b.Run(fmt.Sprintf("companies=%d", n), func(b *testing.B) { benchCreateOrders(b, n) })
	}
}

func benchCreateOrders(b *testing.B, companies int) {
	api := httpkit.NewAPI(b, httpkit.APIOptions{})
	cos := make([]benchCompany, companies)
	for i := range cos {
		cos[i] = newBenchCompany(b, api)
	}
	url := api.URL + public.Prefix + "/service_orders"
	loadBench(b, "orders/s", http.StatusCreated, func(worker int) (*http.Request, error) {
		co := cos[worker%len(cos)]
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(co.body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+co.key)
		req.Header.Set("Content-Type", "application/json")
		return req, nil
	})
}
