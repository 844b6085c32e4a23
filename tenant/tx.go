package tenant

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"oficina/schema/db"
)

// ErrNoCompany guards against running a company transaction without one.
var ErrNoCompany = errors.New("tenant: no company id")

// ScopeSQL scopes the rest of a transaction to the company given as its
// argument (row-level security reads app.company_id); true keeps the
// setting local to the transaction. It is the one text of that setting in
// Go: Tx, ExecAll and Scope use it.
const ScopeSQL = "SELECT set_config('app.company_id', ?, true)"

// Scope scopes what follows in tx to companyID, for work that visits
// several companies in one transaction (the dispatcher's batches); Tx
// scopes a whole transaction to one.
func Scope(ctx context.Context, tx bun.Tx, companyID string) error {
	if companyID == "" {
		return ErrNoCompany
	}
	if _, err := tx.ExecContext(ctx, ScopeSQL, companyID); err != nil {
		return fmt.Errorf("tenant: set company: %w", err)
	}
	return nil
}

// Tx runs fn in one transaction scoped to companyID: app.company_id is set
// for the transaction only, so row-level security admits that company's rows
// and nothing else, whatever fn's queries say.
//
// On a pool opened by db.Open the setting travels with BEGIN, in one round
// trip; inside another transaction (a savepoint) or on another pool it is a
// statement of its own.
func Tx(ctx context.Context, idb bun.IDB, companyID string, fn func(ctx context.Context, tx bun.Tx) error) error {
	return TxWith(ctx, idb, companyID, "", fn)
}

// TxWith is Tx whose transaction starts with first: complete, formatted
// statements (no placeholders) run right after the company setting and in
// the same message where the pool allows, so a statement that may refuse
// the whole transaction — by failing — adds no round trip. Its error ends
// the transaction before fn runs and is TxWith's error, wrapped.
func TxWith(ctx context.Context, idb bun.IDB, companyID, first string, fn func(ctx context.Context, tx bun.Tx) error) error {
	return TxAround(ctx, idb, companyID, first, func(ctx context.Context, tx bun.Tx) (string, error) {
		return "", fn(ctx, tx)
	})
}

// TxAround is TxWith whose fn also returns last: complete, formatted
// statements to run at the end of the transaction, in COMMIT's message
// where the pool allows (db.CommitSQL), so statements whose results the
// write does not read add no round trip. An error of last rolls the
// transaction back and is TxAround's error.
func TxAround(ctx context.Context, idb bun.IDB, companyID, first string, fn func(ctx context.Context, tx bun.Tx) (last string, err error)) error {
	if companyID == "" {
		return ErrNoCompany
	}
	bdb, ok := idb.(*bun.DB)
	if !ok {
		return idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := set(ctx, tx, companyID, first); err != nil {
				return err
			}
			last, err := fn(ctx, tx)
			if err != nil {
				return err
			}
			return runLast(ctx, tx, last)
		})
	}
	begin := &db.BeginSQL{SQL: bdb.QueryGen().FormatQuery(ScopeSQL, companyID)}
	if first != "" {
		begin.SQL += ";\n" + first
	}
	commit := &db.CommitSQL{}
	tx, err := bdb.BeginTx(db.WithCommitSQL(db.WithBeginSQL(ctx, begin), commit), nil)
	if err != nil {
		return fmt.Errorf("tenant: begin: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	if !begin.Sent {
		if err := set(ctx, tx, companyID, first); err != nil {
			return err
		}
	}
	last, err := fn(ctx, tx)
	if err != nil {
		return err
	}
	if !commit.Taken {
		if err := runLast(ctx, tx, last); err != nil {
			return err
		}
	}
	commit.SQL = last
	done = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("tenant: commit: %w", err)
	}
	return nil
}

// runLast runs a transaction's last statements as a statement of their own.
func runLast(ctx context.Context, tx bun.Tx, last string) error {
	if last == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, last); err != nil {
		return fmt.Errorf("tenant: last statements: %w", err)
	}
	return nil
}

// set runs the company setting and first as statements of tx.
func set(ctx context.Context, tx bun.Tx, companyID, first string) error {
	if err := Scope(ctx, tx, companyID); err != nil {
		return err
	}
	if first == "" {
		return nil
	}
	// Run as sent: bun formats only when there are arguments.
	if _, err := tx.ExecContext(ctx, first); err != nil {
		return fmt.Errorf("tenant: begin: %w", err)
	}
	return nil
}

// Scoped is statements to run in one company's scope (see ExecAll).
type Scoped struct {
	CompanyID  string
	Statements string
	Args       []any
}

// ExecAll runs each entry's statements in its company's scope, all in one
// message: one round trip and one implicit transaction whatever the number
// of companies (each entry first sets its company, which holds until the
// next entry sets another). PostgreSQL runs a multi-statement message as
// one implicit transaction: all or nothing, with no BEGIN or COMMIT of its
// own. For short writes that read nothing back.
func ExecAll(ctx context.Context, pool *bun.DB, entries []Scoped) error {
	if len(entries) == 0 {
		return nil
	}
	gen := pool.QueryGen()
	var q strings.Builder
	for i, e := range entries {
		if e.CompanyID == "" {
			return ErrNoCompany
		}
		if i > 0 {
			q.WriteString(";\n")
		}
		q.WriteString(gen.FormatQuery(ScopeSQL, e.CompanyID))
		q.WriteString(";\n")
		q.WriteString(gen.FormatQuery(e.Statements, e.Args...))
	}
	if _, err := pool.ExecContext(ctx, q.String()); err != nil {
		return fmt.Errorf("tenant: exec: %w", err)
	}
	return nil
}
