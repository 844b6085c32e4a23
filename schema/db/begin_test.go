package db_test

import (
	"context"
	"fmt"
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

// Statements can travel with COMMIT too: they run inside the transaction
// before it commits; a failing one is Commit's error, nothing of the
// transaction is kept (a session setting changed in it is undone), and the
// connection stays usable.
func TestCommitSQLRunsBeforeTheCommitItTravelsWith(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()
	// One connection, whose session setting the transactions change.
	conn, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const appendTo = "SELECT set_config('app.probe', current_setting('app.probe', true) || '%s', false)"
	for _, tc := range []struct {
		name, sql string
		fails     bool
		want      string
	}{
		{name: "committed with the statements", sql: fmt.Sprintf(appendTo, "b"), want: "ab"},
		{name: "a failing statement rolls everything back", sql: fmt.Sprintf(appendTo, "b") + "; SELECT 1/0", fails: true, want: ""},
	} {
		if _, err := conn.ExecContext(ctx, "SELECT set_config('app.probe', '', false)"); err != nil {
			t.Fatal(err)
		}
		c := &db.CommitSQL{}
		tx, err := conn.BeginTx(db.WithCommitSQL(ctx, c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(appendTo, "a")); err != nil {
			t.Fatal(err)
		}
		c.SQL = tc.sql
		err = tx.Commit()
		if !c.Taken || (err != nil) != tc.fails {
			t.Fatalf("%s: taken=%v, commit: %v", tc.name, c.Taken, err)
		}
		var got string
		var inTx bool
		if err := conn.NewRaw("SELECT current_setting('app.probe', true), now() <> statement_timestamp()").Scan(ctx, &got, &inTx); err != nil {
			t.Fatal(err)
		}
		if got != tc.want || inTx {
			t.Errorf("%s: setting %q (want %q), inside a transaction %v", tc.name, got, tc.want, inTx)
		}
	}
}
