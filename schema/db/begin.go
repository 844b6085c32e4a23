package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// BeginSQL asks for statements to run at the start of the next transaction
// begun with its context: they travel in the same message as BEGIN, so a
// transaction that must first set something (the company of row-level
// security) costs one round trip less.
type BeginSQL struct {
	// SQL is one or more complete statements, already formatted (the simple
	// protocol sends them as they are).
	SQL string
	// Sent reports that the driver ran SQL with BEGIN. A pool not opened by
	// Open ignores the request and leaves it false; the caller then runs SQL
	// itself.
	Sent bool
}

type beginSQLKey struct{}

// WithBeginSQL returns a context whose BeginTx (on a DB opened by Open, with
// default options) runs b.SQL inside the new transaction in BEGIN's message.
// An error of b.SQL is BeginTx's error and leaves no transaction behind.
func WithBeginSQL(ctx context.Context, b *BeginSQL) context.Context {
	return context.WithValue(ctx, beginSQLKey{}, b)
}

// connector hands out connections that honour WithBeginSQL.
type connector struct{ driver.Connector }

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if sc, ok := conn.(*stdlib.Conn); ok {
		return &beginConn{Conn: sc}, nil
	}
	return conn, nil
}

// beginConn is pgx's database/sql connection with a BeginTx that can send
// statements along with BEGIN; everything else is pgx's.
type beginConn struct{ *stdlib.Conn }

func (c *beginConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, _ := ctx.Value(beginSQLKey{}).(*BeginSQL)
	if b == nil || b.SQL == "" || opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		return c.Conn.BeginTx(ctx, opts)
	}
	pc := c.Conn.Conn()
	if pc.IsClosed() {
		return nil, driver.ErrBadConn
	}
	// Without arguments pgx sends the text as one simple-protocol message;
	// PostgreSQL runs its statements in order and stops at the first error.
	tx, err := pc.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; " + b.SQL})
	if err != nil {
		// A statement after BEGIN that fails (a refusal some callers expect)
		// leaves the session in an aborted transaction: end it, so the
		// connection returns to the pool clean instead of being retired.
		if pc.PgConn().TxStatus() != 'I' {
			if _, rbErr := pc.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
				return nil, errors.Join(err, driver.ErrBadConn)
			}
		}
		return nil, err
	}
	b.Sent = true
	return pgxTx{ctx: ctx, tx: tx}, nil
}

// pgxTx is a pgx transaction as database/sql drives it (as pgx's stdlib
// wraps its own).
type pgxTx struct {
	ctx context.Context
	tx  pgx.Tx
}

func (t pgxTx) Commit() error   { return t.tx.Commit(t.ctx) }
func (t pgxTx) Rollback() error { return t.tx.Rollback(t.ctx) }
