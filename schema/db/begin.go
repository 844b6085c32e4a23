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

// CommitSQL asks for statements to run at the end of a transaction begun
// with its context: they travel in the same message as COMMIT, so a write
// that ends with statements whose results it does not read (an idempotency
// record, a row nothing reads back) costs no round trip for them. It is
// the mirror of BeginSQL.
type CommitSQL struct {
	// SQL is one or more complete statements, already formatted, set any
	// time before Commit. PostgreSQL runs them in order and stops at the
	// first error: the transaction is then rolled back and Commit returns
	// that error, so a statement may refuse the whole write by failing.
	SQL string
	// Taken is set when the transaction begins if its Commit will send SQL
	// with COMMIT. A pool not opened by Open, or a transaction not begun
	// with this context, leaves it false; the caller then runs SQL itself
	// before committing.
	Taken bool
}

type commitSQLKey struct{}

// WithCommitSQL returns a context whose BeginTx (on a DB opened by Open,
// with default options) begins a transaction whose Commit sends c.SQL in
// COMMIT's message.
func WithCommitSQL(ctx context.Context, c *CommitSQL) context.Context {
	return context.WithValue(ctx, commitSQLKey{}, c)
}

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
	cs, _ := ctx.Value(commitSQLKey{}).(*CommitSQL)
	if ((b == nil || b.SQL == "") && cs == nil) || opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		return c.Conn.BeginTx(ctx, opts)
	}
	pc := c.Conn.Conn()
	if pc.IsClosed() {
		return nil, driver.ErrBadConn
	}
	begin := "BEGIN"
	if b != nil && b.SQL != "" {
		begin += "; " + b.SQL
	}
	// Without arguments pgx sends the text as one simple-protocol message;
	// PostgreSQL runs its statements in order and stops at the first error.
	tx, err := pc.BeginTx(ctx, pgx.TxOptions{BeginQuery: begin})
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
	if b != nil {
		b.Sent = true
	}
	if cs != nil {
		cs.Taken = true
	}
	return pgxTx{ctx: ctx, tx: tx, commit: cs}, nil
}

// pgxTx is a pgx transaction as database/sql drives it (as pgx's stdlib
// wraps its own).
type pgxTx struct {
	ctx    context.Context
	tx     pgx.Tx
	commit *CommitSQL
}

// errCommitRolledBack is a COMMIT that PostgreSQL answered with ROLLBACK:
// the transaction had failed before it.
var errCommitRolledBack = errors.New("db: commit: the transaction was rolled back")

func (t pgxTx) Commit() error {
	if t.commit == nil || t.commit.SQL == "" {
		return t.tx.Commit(t.ctx)
	}
	pc := t.tx.Conn().PgConn()
	results, err := pc.Exec(t.ctx, t.commit.SQL+";\nCOMMIT").ReadAll()
	if err != nil {
		// A statement that failed skipped the COMMIT after it: the
		// transaction is aborted; end it so the connection returns to the
		// pool clean.
		if !pc.IsClosed() && pc.TxStatus() != 'I' {
			if _, rbErr := pc.Exec(context.WithoutCancel(t.ctx), "ROLLBACK").ReadAll(); rbErr != nil {
				return errors.Join(err, driver.ErrBadConn)
			}
		}
		return err
	}
	if n := len(results); n == 0 || results[n-1].CommandTag.String() != "COMMIT" {
		return errCommitRolledBack
	}
	return nil
}

func (t pgxTx) Rollback() error { return t.tx.Rollback(t.ctx) }
