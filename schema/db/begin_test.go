package db_test

import (
	"context"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/db"
)

// The company setting of a transaction travels with its BEGIN: the
// statements run inside the new transaction (and end with it), a failing
// one is BeginTx's error and leaves no transaction behind, and the
// connection stays usable.
func TestBeginSQLRunsInsideTheTransactionItStarts(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()
	b := &db.BeginSQL{SQL: "SELECT set_config('app.company_id', 'co_probe', true)"}
	tx, err := pool.BeginTx(db.WithBeginSQL(ctx, b), nil)
	if err != nil {
		t.Fatal(err)
	}
	var inside string
	if err := tx.NewRaw("SELECT current_setting('app.company_id', true)").Scan(ctx, &inside); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if !b.Sent || inside != "co_probe" {
		t.Fatalf("sent=%v, setting inside the transaction %q", b.Sent, inside)
	}

	bad := &db.BeginSQL{SQL: "SELECT 1/0"}
	if _, err := pool.BeginTx(db.WithBeginSQL(ctx, bad), nil); err == nil || bad.Sent {
		t.Fatalf("failing begin statements: err=%v sent=%v", err, bad.Sent)
	}
	// Every connection of the pool answers outside any transaction, with
	// no company set.
	for range 20 {
		var after string
		var inTx bool
		if err := pool.NewRaw("SELECT current_setting('app.company_id', true), now() <> statement_timestamp()").Scan(ctx, &after, &inTx); err != nil {
			t.Fatal(err)
		}
		if after != "" || inTx {
			t.Fatalf("after the transactions: setting %q, inside a transaction %v", after, inTx)
		}
	}
}
