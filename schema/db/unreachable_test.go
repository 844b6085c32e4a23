package db_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"oficina/ops/testkit"
	"oficina/schema/db"
)

// Issue 15 item 6: a database out of reach is told apart from a statement
// it refused — the first is a 503 worth retrying, the second stays 500.
// The errors are the driver's own, produced against real servers.
func TestUnreachableTellsAnOutageFromARefusedStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	owner := testkit.OwnerDB(t)
	_, refused := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=5")
	_, syntax := pool.ExecContext(ctx, "SELEC 1")
	_, divide := pool.ExecContext(ctx, "SELECT 1/0")

	// A session the server ends (pg_terminate_backend: what a fast
	// shutdown does to every session).
	conn, err := pgx.Connect(ctx, testkit.OwnerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := owner.ExecContext(ctx, "SELECT pg_terminate_backend(?)", conn.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	_, terminated := conn.Exec(ctx, "SELECT 1")
	_, afterwards := conn.Exec(ctx, "SELECT 1")

	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"session terminated by the server", terminated, true},
		{"a closed connection used again", afterwards, true},
		{"wrapped", fmt.Errorf("tenant: begin: %w", refused), true},
		{"database/sql bad connection", fmt.Errorf("x: %w", driver.ErrBadConn), true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"syntax error", syntax, false},
		{"division by zero", divide, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"no rows", sql.ErrNoRows, false},
		{"canceled", context.Canceled, false},
		{"other", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		if tc.want && tc.err == nil {
			t.Fatalf("%s: no error produced", tc.name)
		}
		if got := db.Unreachable(tc.err); got != tc.want {
			t.Errorf("%s: Unreachable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
