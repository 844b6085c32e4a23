package public_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"oficina/http/public"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// BenchmarkLeadCapture measures POST /leads of new contacts with the
// default task, from 32 concurrent clients over real HTTP and PostgreSQL
// (each capture: one record, one task, client.created and task.created in
// the outbox). It reports captures/s; nothing asserts on time.
func BenchmarkLeadCapture(b *testing.B) {
	api := httpkit.NewAPI(b, httpkit.APIOptions{})
	co := testkit.NewCompany(b, tenant.CompanyInput{})
	key := co.OwnerKey(b, "leads:create", "tasks:create", "leads:read")
	// Keep-alive connections for every client, as an integrator's pool would.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	url := api.URL + public.Prefix + "/leads"
	run := fmt.Sprintf("%x", time.Now().UnixNano())
	var seq atomic.Int64
	b.SetParallelism((32 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			body := fmt.Sprintf(`{"name":"Lead %d","email":"lead%d.%s@example.com","source":"bench"}`, n, n, run)
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(public.IdempotencyHeader, fmt.Sprintf("%s-%d", run, n))
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body) // drained, so the connection is reused
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "captures/s")
}
