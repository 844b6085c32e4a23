package idempotency_test

import (
	"context"
	"errors"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/idempotency"
	"oficina/tenant"
)

// Spec 4.1 (same key while the first request runs → 409): the claim sent
// with BEGIN refuses a second transaction while the first holds the key —
// before anything runs in it — and admits it once the first has ended; the
// savepoint it sets is there for Undo.
func TestClaimSentWithBeginRefusesAKeyInUse(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ctx := context.Background()
	claim := idempotency.ClaimFirst(co.Company.ID, "k")
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- tenant.TxWith(ctx, co.DB, co.Company.ID, claim, func(ctx context.Context, tx bun.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	ran := false
	err := tenant.TxWith(ctx, co.DB, co.Company.ID, claim, func(context.Context, bun.Tx) error { ran = true; return nil })
	close(release)
	if !idempotency.InProgress(err) || ran {
		t.Fatalf("second claim while the first runs: err=%v, ran=%v", err, ran)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	err = tenant.TxWith(ctx, co.DB, co.Company.ID, claim, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT 1/0"); err == nil {
			return errors.New("1/0 succeeded")
		}
		return idempotency.Undo(ctx, tx)
	})
	if err != nil {
		t.Fatalf("claim after the first ended: %v", err)
	}
	if idempotency.InProgress(errors.New("other")) {
		t.Fatal("InProgress on an unrelated error")
	}
}
