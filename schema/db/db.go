// Package db opens PostgreSQL through bun and pgx, creates the database when
// it is missing and applies the embedded migrations, then the SQL function
// files of the packages that call them. Two connection roles are kept
// apart: the owner URL (migrations) and the app URL, the same server with
// the oficina_app role, under which row-level security applies.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/migrate"

	"oficina/schema/migrations"
)

// DefaultURL is the local cluster of a development machine.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/oficina?sslmode=disable"

// DefaultConnectTimeout bounds opening a connection when the URL sets no
// connect_timeout.
const DefaultConnectTimeout = 5 * time.Second

// The roles the service connects as (migrations create them): requests run
// as AppRole; the relay, the dispatchers and the sweepers as WorkerRole,
// the only role that may call the cross-company functions
// (docs/security.md).
const (
	AppRole    = "oficina_app"
	WorkerRole = "oficina_worker"
)

// Options tune the pool.
type Options struct {
	MaxOpenConns int           // default 32
	MaxIdleConns int           // default MaxOpenConns
	ConnMaxLife  time.Duration // default 30 min
}

// Open returns a bun.DB on url using pgx's simple protocol (no prepared
// statement cache, so it works behind transaction poolers too). Its
// connections honour WithBeginSQL.
func Open(ctx context.Context, rawURL string, o Options) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("db: parse url: %w", err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	if cfg.ConnectTimeout == 0 {
		// A server that does not answer (a host gone, a network dropping
		// packets) would otherwise hold a request for the kernel's TCP
		// timeout, minutes, before its 503.
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	sqldb := sql.OpenDB(connector{stdlib.GetConnector(*cfg)})
	if o.MaxOpenConns == 0 {
		o.MaxOpenConns = 32
	}
	if o.MaxIdleConns == 0 {
		o.MaxIdleConns = o.MaxOpenConns
	}
	if o.ConnMaxLife == 0 {
		o.ConnMaxLife = 30 * time.Minute
	}
	sqldb.SetMaxOpenConns(o.MaxOpenConns)
	sqldb.SetMaxIdleConns(o.MaxIdleConns)
	sqldb.SetConnMaxLifetime(o.ConnMaxLife)
	bdb := bun.NewDB(sqldb, pgdialect.New())
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := bdb.PingContext(pctx); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("db: connect %s: %w", redact(rawURL), err)
	}
	return bdb, nil
}

// AppURL derives the request role's URL from the owner's: same server and
// database, user oficina_app, password when given.
func AppURL(ownerURL, password string) (string, error) { return roleURL(ownerURL, AppRole, password) }

// WorkerURL derives the worker role's URL from the owner's.
func WorkerURL(ownerURL, password string) (string, error) {
	return roleURL(ownerURL, WorkerRole, password)
}

func roleURL(ownerURL, role, password string) (string, error) {
	u, err := url.Parse(ownerURL)
	if err != nil {
		return "", fmt.Errorf("db: parse url: %w", err)
	}
	if password != "" {
		u.User = url.UserPassword(role, password)
	} else {
		u.User = url.User(role)
	}
	return u.String(), nil
}

// EnsureDatabase creates the URL's database when it does not exist yet.
func EnsureDatabase(ctx context.Context, ownerURL string) error {
	u, err := url.Parse(ownerURL)
	if err != nil {
		return fmt.Errorf("db: parse url: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return errors.New("db: url names no database")
	}
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return fmt.Errorf("db: connect to create %q: %w", name, err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if err != nil && !(errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505")) {
		return fmt.Errorf("db: create database %q: %w", name, err)
	}
	return nil
}

// Recreate drops database name on the server of ownerURL (closing its
// sessions) and creates it empty; it returns the new database's URL. For
// scratch databases only: benchmarks and fault runs that must start clean.
func Recreate(ctx context.Context, ownerURL, name string) (string, error) {
	u, err := url.Parse(ownerURL)
	if err != nil {
		return "", fmt.Errorf("db: parse url: %w", err)
	}
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return "", fmt.Errorf("db: connect to recreate %q: %w", name, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("db: drop %q: %w", name, err)
	}
	u.Path = "/" + name
	if err := EnsureDatabase(ctx, u.String()); err != nil {
		return "", err
	}
	return u.String(), nil
}

// migrateLock serialises migrators across processes (several test binaries,
// several replicas starting at once).
const migrateLock = 0x0f1c1a

// Applied is what a Migrate changed.
type Applied struct {
	Migrations []string // versioned migrations, by name
	Functions  []string // functions (re)created from their files
}

// Migrate creates the database if needed, applies pending migrations as the
// owner, then the function files of functions whose file changed since the
// last migrate, all under one lock. The kernel cannot import the packages
// that own the functions: the caller lists them (ops/migrate).
func Migrate(ctx context.Context, ownerURL string, functions ...Functions) (Applied, error) {
	var applied Applied
	files, err := ReadFunctions(functions...)
	if err != nil {
		return applied, err
	}
	if err := EnsureDatabase(ctx, ownerURL); err != nil {
		return applied, err
	}
	bdb, err := Open(ctx, ownerURL, Options{MaxOpenConns: 2})
	if err != nil {
		return applied, err
	}
	defer bdb.Close()
	conn, err := bdb.Conn(ctx)
	if err != nil {
		return applied, fmt.Errorf("db: migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrateLock); err != nil {
		return applied, fmt.Errorf("db: migrate lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrateLock) //nolint:errcheck
	ms, err := migrations.All()
	if err != nil {
		return applied, err
	}
	m := migrate.NewMigrator(bdb, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return applied, fmt.Errorf("db: migrate init: %w", err)
	}
	group, err := m.Migrate(ctx)
	if err != nil {
		return applied, fmt.Errorf("db: migrate: %w", err)
	}
	for _, mg := range group.Migrations {
		applied.Migrations = append(applied.Migrations, mg.Name)
	}
	if applied.Functions, err = applyFunctions(ctx, conn, files); err != nil {
		return applied, err
	}
	return applied, nil
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable url)"
	}
	return u.Redacted()
}

// IsConflict reports a transaction PostgreSQL ended to break a conflict
// with another (deadlock 40P01, serialization failure 40001): running it
// again, or in smaller pieces, may succeed.
func IsConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// IsUniqueViolation reports a unique constraint failure (SQLSTATE 23505).
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
