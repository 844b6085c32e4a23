package public_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oficina/http/public"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// saleBenchCompany is a company ready for the sales benchmarks: a key, two
// catalog products with stock, a default account (so sales post to
// finance, the default setting) and the create body.
type saleBenchCompany struct {
	key, body string
}

func newSaleBenchCompany(b *testing.B, api *httpkit.API) saleBenchCompany {
	co := testkit.NewCompany(b, tenant.CompanyInput{})
	admin := func(path string, body any) map[string]any {
		r := api.Admin(b, "POST", "/companies/"+co.Company.ID+path, body)
		if r.Status != http.StatusCreated {
			b.Fatalf("%s: %d %s", path, r.Status, r.Raw)
		}
		return r.Body
	}
	admin("/finance_accounts", map[string]any{"name": "Banco"})
	p1 := admin("/products", map[string]any{"name": "Cadeira", "price_cents": 20000, "promotional_price_cents": 18000, "stock_quantity": 1_000_000})
	p2 := admin("/products", map[string]any{"name": "Camisa", "price_cents": 5000,
		"variations": []map[string]any{{"name": "M", "stock_quantity": 1_000_000}}})
	body := fmt.Sprintf(`{"items":[{"type":"catalog","product_id":%q,"quantity":2},`+
		`{"type":"catalog","product_id":%q,"variation_id":%q}],"shipping_cents":1000,`+
		`"payment_plan":{"mode":"installments","payment_method":"boleto","installments":[`+
		`{"amount_cents":14000,"due_date":"2099-01-10"},{"amount_cents":14000,"due_date":"2099-02-10"},`+
		`{"amount_cents":14000,"due_date":"2099-03-10"}]}}`,
		p1["id"], p2["id"], saleList(p2, "variations")[0]["id"])
	return saleBenchCompany{key: co.OwnerKey(b, "sales:create", "sales:read"), body: body}
}

// BenchmarkCreateSale measures POST /sales with two catalog items (one a
// variation) and three installments from 32 concurrent clients over real
// HTTP and PostgreSQL: each creation prices the items, writes the sale,
// items, installments and version, posts three receivables to finance,
// moves the stock of both products, takes the number and records
// sale.created, three financial_transaction.created and two stock.changed.
// companies=32 spreads the clients over 32 companies; companies=1 puts them
// all on one company, whose gapless numbering and hot stock rows serialise
// the end of each creation. Reports sales/s and p50/p99 latency.
func BenchmarkCreateSale(b *testing.B) {
	for _, n := range []int{32, 1} {
		b.Run(fmt.Sprintf("companies=%d", n), func(b *testing.B) {
			api := httpkit.NewAPI(b, httpkit.APIOptions{})
			cos := make([]saleBenchCompany, n)
			for i := range cos {
				cos[i] = newSaleBenchCompany(b, api)
			}
			url := api.URL + public.Prefix + "/sales"
			loadBench(b, "sales/s", http.StatusCreated, func(worker int) (*http.Request, error) {
				co := cos[worker%len(cos)]
				req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(co.body))
				if err == nil {
					req.Header.Set("Authorization", "Bearer "+co.key)
					req.Header.Set("Content-Type", "application/json")
				}
				return req, err
			})
		})
	}
}

// BenchmarkGetSale measures GET /sales/{id} of a sale like the creation
// benchmark's (one query for the sale, items, installments and payments)
// from 32 concurrent clients. Reports reads/s and p50/p99 latency.
func BenchmarkGetSale(b *testing.B) {
	api := httpkit.NewAPI(b, httpkit.APIOptions{})
	co := newSaleBenchCompany(b, api)
	var ids []string
	for range 32 {
		r := api.Do(b, httpkit.Req{Method: "POST", Path: "/sales", Key: co.key, Body: co.body})
		if r.Status != http.StatusCreated {
			b.Fatalf("create: %d %s", r.Status, r.Raw)
		}
		ids = append(ids, r.Body["id"].(string))
	}
	loadBench(b, "reads/s", http.StatusOK, func(worker int) (*http.Request, error) {
		req, err := http.NewRequest(http.MethodGet, api.URL+public.Prefix+"/sales/"+ids[worker%len(ids)], nil)
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+co.key)
		}
		return req, err
	})
}

// loadBench runs requests from 32 concurrent clients and reports their
// rate (as unit) and p50/p99 latency; nothing asserts on time. Every POST
// carries a fresh Idempotency-Key.
func loadBench(b *testing.B, unit string, want int, next func(worker int) (*http.Request, error)) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var workers, seq atomic.Int64
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism((32 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		worker := int(workers.Add(1))
		var mine []time.Duration
		for pb.Next() {
			req, err := next(worker)
			if err != nil {
				b.Error(err)
				return
			}
			if req.Method == http.MethodPost {
				// Every write sends a fresh key, as integrators do.
				req.Header.Set(public.IdempotencyHeader, fmt.Sprintf("%s-%d-%d", run, worker, seq.Add(1)))
			}
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mine = append(mine, time.Since(t0))
			if resp.StatusCode != want {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), unit)
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
}
