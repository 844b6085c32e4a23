package idempotency_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/clients"
	"oficina/schema/idempotency"
	"oficina/tenant"
)

// BenchmarkTransaction: the company transaction of a small write (a client
// record) alone and, in alternation, with what an Idempotency-Key adds to
// it: the claim (lock and savepoint in one round trip) and the stored
// record. added-p50-ns is idempotency's cost in the database.
func BenchmarkTransaction(b *testing.B) {
	co := testkit.NewCompany(b, tenant.CompanyInput{})
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	body := []byte(`{"object":"client","id":"cli_01","name":"Bench Ltd"}`)
	write := func(key string) time.Duration {
		start := time.Now()
		err := tenant.Tx(ctx, co.DB, co.Company.ID, func(ctx context.Context, tx bun.Tx) error {
			if key != "" {
				if _, err := idempotency.Claim(ctx, tx, co.Company.ID, key); err != nil {
					return err
				}
			}
			now := time.Now()
			if _, err := clients.Create(ctx, tx, co.Company.ID, clients.ClientCreate{Name: "Bench Ltd"}, now); err != nil || key == "" {
				return err
			}
			fp := idempotency.Fingerprint("POST", "/public/v1/x", nil, body)
			return idempotency.Save(ctx, tx, &idempotency.Record{CompanyID: co.Company.ID, Key: key, RequestHash: fp[:],
				Method: "POST", Path: "/public/v1/x", Status: 201, Header: http.Header{"Location": {"/x"}}, Body: body,
				CreatedAt: now, ExpiresAt: now.Add(idempotency.TTL)})
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var without, with []time.Duration
	i := 0
	for b.Loop() {
		i++
		without = append(without, write(""))
		with = append(with, write(run+"-"+strconv.Itoa(i)))
	}
	slices.Sort(without)
	slices.Sort(with)
	if n := len(with); n > 0 {
		b.ReportMetric(float64(without[n/2].Nanoseconds()), "without-p50-ns")
		b.ReportMetric(float64(with[n/2].Nanoseconds()), "with-p50-ns")
		b.ReportMetric(float64((with[n/2] - without[n/2]).Nanoseconds()), "added-p50-ns")
	}
}
