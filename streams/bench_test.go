package streams_test

import (
	"context"
	"slices"

	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// BenchmarkRecordAndPublish: events recorded and published per second from
// concurrent writes (each write: its company transaction with one
// sale.updated event, then the after-commit publish to EVENTS and, with a
// subscribed endpoint, a delivery to DELIVERIES).
func BenchmarkRecordAndPublish(b *testing.B) {
	for _, tc := range []struct {
		name      string
		endpoints int
	}{{"firehose_only", 0}, {"one_endpoint", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			co := newCompany(b)
			for range tc.endpoints {
				endpoint(b, co, true, "sale.*")
			}
			pub := streams.NewPublisher(co.DB, testkit.JetStream(b, jsconfig.Config{}), nil)
			before, after := newSale("sal_b"), newSale("sal_b")
			after.Total = 2000
			ctx := context.Background()
			b.SetParallelism(8) // 16 concurrent writers on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					var rs []streams.Recorded
					err := tenant.Tx(ctx, co.DB, co.Company.ID, func(ctx context.Context, tx bun.Tx) error {
						var err error
						rs, err = streams.Record(ctx, writeIn(tx, co, streams.ActorAPI),
							streams.Change{Type: "sale.updated", Object: after, Before: before})
						return err
					})
					if err == nil {
						err = pub.Publish(ctx, rs)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkRecordLatency: the latency recording adds to a write — the time
// streams.Record spends inside the write's transaction (envelope, the
// subscribed-endpoint lookup, the outbox and delivery inserts), as p50 and
// p99 (aim: p50 ≤ 1 ms).
func BenchmarkRecordLatency(b *testing.B) {
	for _, tc := range []struct {
		name      string
		endpoints int
	}{{"firehose_only", 0}, {"one_endpoint", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			co := newCompany(b)
			for range tc.endpoints {
				endpoint(b, co, true, "sale.*")
			}
			before, after := newSale("sal_l"), newSale("sal_l")
			after.Notes = "changed"
			ds := make([]time.Duration, 0, 1024)
			ctx := context.Background()
			for b.Loop() {
				err := tenant.Tx(ctx, co.DB, co.Company.ID, func(ctx context.Context, tx bun.Tx) error {
					start := time.Now()
					_, err := streams.Record(ctx, writeIn(tx, co, streams.ActorAPI), streams.Change{Type: "sale.updated", Object: after, Before: before})
					ds = append(ds, time.Since(start))
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
