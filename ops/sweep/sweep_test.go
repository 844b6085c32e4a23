package sweep_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/sweep"
	"oficina/ops/testkit"
	"oficina/schema/idempotency"
	"oficina/schema/service"
	"oficina/tenant"
)

func store(t *testing.T, co *testkit.Company, key string, at time.Time) {
	t.Helper()
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return idempotency.Save(ctx, tx, &idempotency.Record{CompanyID: co.Company.ID, Key: key, RequestHash: make([]byte, 32),
			Method: "POST", Path: "/public/v1/x", Status: 201, Body: []byte("{}"), CreatedAt: at, ExpiresAt: at.Add(idempotency.TTL)})
	})
}

func keys(t *testing.T, co *testkit.Company) []string {
	t.Helper()
	var out []string
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model((*idempotency.Record)(nil)).Column("idempotency_key").Order("idempotency_key").Scan(ctx, &out)
	})
	return out
}

// Spec 4.1: the sweeper deletes idempotency records once their 24 hours
// are over, in every company, and keeps the live ones.
func TestSweeperDeletesExpiredIdempotencyRecords(t *testing.T) {
	t.Parallel()
	db := testkit.WorkerDB(t) // the sweeper is a worker
	// The real time: other tests' records (live by it) are left alone.
	now := time.Now().UTC().Truncate(time.Second)
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	store(t, a, "old", now.Add(-idempotency.TTL))
	store(t, a, "live", now.Add(-idempotency.TTL+time.Second))
	store(t, b, "old", now.Add(-idempotency.TTL-time.Hour))

	r := &sweep.Runner{Base: service.Base{Now: func() time.Time { return now }}, Tasks: []sweep.Task{sweep.Idempotency(db)}}
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if k := keys(t, a); len(k) != 1 || k[0] != "live" {
		t.Fatalf("company a keeps %v", k)
	}
	if k := keys(t, b); len(k) != 0 {
		t.Fatalf("company b keeps %v", k)
	}
}
