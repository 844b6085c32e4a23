package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// Functions are the SQL functions one package calls, kept beside its Go
// (decision 0020): the files sql/<function>.sql of FS, each defining that
// one function and idempotent — CREATE OR REPLACE FUNCTION, then the
// function's owner, settings and privileges. Migrate applies them after
// the versioned migrations, so a file holds a function's current body
// whatever older migrations said.
type Functions struct {
	Package string // the owner, named in errors
	FS      fs.FS
}

// functionsTable records the digest of each function file applied, so a
// migrate re-creates only the functions whose file changed (or that are
// missing): an unchanged database is not touched, and running sessions keep
// their cached plans. Bookkeeping, like bun_migrations.
const functionsTable = "oficina_function_sources"

var (
	functionName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	createFunc   = regexp.MustCompile(`(?i)\bCREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+(?:public\.)?([a-z_][a-z0-9_]*)\s*\(`)
)

// FunctionFile is one function's source, read from its package.
type FunctionFile struct {
	Name    string // the function, the file's name without .sql
	Package string
	Path    string // within the package
	SQL     string
	sum     string
}

// ReadFunctions reads the function files of every source and checks them:
// each file creates exactly one function, the one it is named after, with
// CREATE OR REPLACE, and no function has two files.
func ReadFunctions(sources ...Functions) ([]FunctionFile, error) {
	var files []FunctionFile
	where := map[string]string{}
	for _, src := range sources {
		paths, err := fs.Glob(src.FS, "sql/*.sql")
		if err != nil {
			return nil, fmt.Errorf("db: functions of %s: %w", src.Package, err)
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("db: functions of %s: no sql/*.sql", src.Package)
		}
		for _, p := range paths {
			name := strings.TrimSuffix(path.Base(p), ".sql")
			at := src.Package + "/" + p
			if !functionName.MatchString(name) {
				return nil, fmt.Errorf("db: %s: not named after a function", at)
			}
			if other, ok := where[name]; ok {
				return nil, fmt.Errorf("db: function %s has two sources, %s and %s", name, other, at)
			}
			where[name] = at
			b, err := fs.ReadFile(src.FS, p)
			if err != nil {
				return nil, fmt.Errorf("db: %s: %w", at, err)
			}
			creates := createFunc.FindAllStringSubmatch(string(b), -1)
			if len(creates) != 1 || !strings.EqualFold(creates[0][2], name) {
				return nil, fmt.Errorf("db: %s must create function %s and nothing else", at, name)
			}
			if creates[0][1] == "" {
				return nil, fmt.Errorf("db: %s: CREATE OR REPLACE FUNCTION, so the file can run again", at)
			}
			sum := sha256.Sum256(b)
			files = append(files, FunctionFile{Name: name, Package: src.Package, Path: p, SQL: string(b), sum: hex.EncodeToString(sum[:])})
		}
	}
	return files, nil
}

// applyFunctions runs, in one transaction on conn (which holds the migrate
// lock), every function file whose digest differs from the one recorded or
// whose function is missing, and records the new digests. It returns the
// functions it (re)created.
func applyFunctions(ctx context.Context, conn bun.Conn, files []FunctionFile) ([]string, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("db: functions: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+functionsTable+` (
		name text PRIMARY KEY, package text NOT NULL, path text NOT NULL, sha256 text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("db: functions: %w", err)
	}
	var recorded []struct {
		Name   string `bun:"name"`
		SHA256 string `bun:"sha256"`
	}
	if err := tx.NewRaw(`SELECT s.name, s.sha256 FROM `+functionsTable+` s
		WHERE EXISTS (SELECT 1 FROM pg_proc p WHERE p.proname = s.name AND p.pronamespace = 'public'::regnamespace)`).
		Scan(ctx, &recorded); err != nil {
		return nil, fmt.Errorf("db: functions: %w", err)
	}
	current := map[string]string{}
	for _, r := range recorded {
		current[r.Name] = r.SHA256
	}
	var applied []string
	for _, f := range files {
		if current[f.Name] == f.sum {
			continue
		}
		if err := applyFunction(ctx, tx, f); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+functionsTable+` (name, package, path, sha256) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET package = EXCLUDED.package, path = EXCLUDED.path,
			sha256 = EXCLUDED.sha256, applied_at = now()`, f.Name, f.Package, f.Path, f.sum); err != nil {
			return nil, fmt.Errorf("db: functions: record %s: %w", f.Name, err)
		}
		applied = append(applied, f.Name)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("db: functions: %w", err)
	}
	return applied, nil
}

type overload struct {
	OID       uint32 `bun:"oid"`
	Signature string `bun:"signature"`
}

func overloads(ctx context.Context, tx bun.Tx, name string) ([]overload, error) {
	var os []overload
	err := tx.NewRaw(`SELECT p.oid, p.oid::regprocedure::text AS signature FROM pg_proc p
		WHERE p.proname = ? AND p.pronamespace = 'public'::regnamespace ORDER BY p.oid`, name).Scan(ctx, &os)
	return os, err
}

// applyFunction runs one file. A signature change is taken care of here so
// the file only ever says what the function is now: when CREATE OR REPLACE
// refuses the change (a new return type or argument names, SQLSTATE 42P13)
// the old function is dropped and the file run again; when new argument
// types made it create a second function beside the old one, the old one is
// dropped. Either drop fails while something (a policy, a view) depends on
// the old function: such a change needs a migration.
func applyFunction(ctx context.Context, tx bun.Tx, f FunctionFile) error {
	fail := func(err error) error {
		return fmt.Errorf("db: function %s (%s/%s): %w", f.Name, f.Package, f.Path, err)
	}
	before, err := overloads(ctx, tx, f.Name)
	if err != nil {
		return fail(err)
	}
	drop := func() error {
		for _, o := range before {
			if _, err := tx.ExecContext(ctx, "DROP FUNCTION "+o.Signature); err != nil {
				return fmt.Errorf("drop the old %s: %w", o.Signature, err)
			}
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, "SAVEPOINT function_source"); err != nil {
		return fail(err)
	}
	_, err = tx.ExecContext(ctx, f.SQL)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P13" && len(before) > 0 {
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT function_source"); err != nil {
			return fail(err)
		}
		if err := drop(); err != nil {
			return fail(err)
		}
		_, err = tx.ExecContext(ctx, f.SQL)
	}
	if err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT function_source"); err != nil {
		return fail(err)
	}
	after, err := overloads(ctx, tx, f.Name)
	if err != nil {
		return fail(err)
	}
	created := slices.ContainsFunc(after, func(a overload) bool {
		return !slices.ContainsFunc(before, func(b overload) bool { return a.OID == b.OID })
	})
	if created && len(after) > 1 {
		if err := drop(); err != nil {
			return fail(err)
		}
		if after, err = overloads(ctx, tx, f.Name); err != nil {
			return fail(err)
		}
	}
	switch {
	case len(after) == 0:
		return fail(errors.New("the file did not create it"))
	case len(after) > 1:
		return fail(fmt.Errorf("%d functions of that name: drop the others in a migration", len(after)))
	}
	return nil
}
