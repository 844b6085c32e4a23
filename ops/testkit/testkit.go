// Package testkit gives tests the real things: the migrated test database
// (as the app role, so row-level security applies), an embedded JetStream
// per test, and companies with members and keys. Tests isolate by company:
// each makes its own, so they run in parallel on one database.
package testkit

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"
	bunmigrate "github.com/uptrace/bun/migrate"

	"oficina/ops/migrate"
	"oficina/ops/natsembed"
	"oficina/schema/db"
	"oficina/schema/migrations"
	"oficina/streams/jsconfig"
)

// DefaultTestURL is the owner URL of the test database.
const DefaultTestURL = "postgres://postgres@127.0.0.1:5432/oficina_test?sslmode=disable"

// OwnerURL is $OFICINA_TEST_DATABASE_URL or DefaultTestURL.
func OwnerURL() string {
	if u := os.Getenv("OFICINA_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultTestURL
}

var shared struct {
	once   sync.Once
	app    *bun.DB
	worker *bun.DB
	owner  *bun.DB
	err    error
}

func setup() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := migrate.Run(ctx, OwnerURL()); err != nil {
		shared.err = err
		return
	}
	appURL, err := db.AppURL(OwnerURL(), os.Getenv("OFICINA_APP_DB_PASSWORD"))
	if err != nil {
		shared.err = err
		return
	}
	if shared.app, err = db.Open(ctx, appURL, db.Options{MaxOpenConns: 16}); err != nil {
		shared.err = err
		return
	}
	workerURL, err := db.WorkerURL(OwnerURL(), os.Getenv("OFICINA_WORKER_DB_PASSWORD"))
	if err != nil {
		shared.err = err
		return
	}
	if shared.worker, err = db.Open(ctx, workerURL, db.Options{MaxOpenConns: 8}); err != nil {
		shared.err = err
		return
	}
	shared.owner, shared.err = db.Open(ctx, OwnerURL(), db.Options{MaxOpenConns: 4})
}

// DB returns the app-role pool on the migrated test database.
func DB(t testing.TB) *bun.DB {
	t.Helper()
	shared.once.Do(setup)
	if shared.err != nil {
		t.Fatalf("testkit: database: %v", shared.err)
	}
	return shared.app
}

// WorkerDB returns the worker-role pool (relay, dispatch, sweepers): the
// app role's rights plus the cross-company functions.
func WorkerDB(t testing.TB) *bun.DB {
	t.Helper()
	DB(t)
	return shared.worker
}

// OwnerDB returns a pool as the database owner (bypasses nothing: the
// tables FORCE row-level security, but the owner may inspect catalogs).
func OwnerDB(t testing.TB) *bun.DB {
	t.Helper()
	DB(t)
	return shared.owner
}

// ScratchDB creates the database <test database>_<suffix>, empty and
// migrated, drops it when the test ends and returns its owner URL: for
// the few tests that must read a whole database, which on the shared one
// would hold every other test's rows. suffix must be unique per test.
func ScratchDB(t testing.TB, suffix string) string {
	t.Helper()
	scratch := EmptyScratchDB(t, suffix)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := migrate.Run(ctx, scratch); err != nil {
		t.Fatalf("testkit: scratch database: %v", err)
	}
	return scratch
}

// ScratchPools opens the request role's and the worker role's pools on a
// scratch database (ScratchDB's owner URL), closed when the test ends.
func ScratchPools(t testing.TB, ownerURL string) (app, worker *bun.DB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(role func(string, string) (string, error), env string) *bun.DB {
		u, err := role(ownerURL, os.Getenv(env))
		if err != nil {
			t.Fatalf("testkit: scratch pool: %v", err)
		}
		p, err := db.Open(ctx, u, db.Options{MaxOpenConns: 4})
		if err != nil {
			t.Fatalf("testkit: scratch pool: %v", err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	return open(db.AppURL, "OFICINA_APP_DB_PASSWORD"), open(db.WorkerURL, "OFICINA_WORKER_DB_PASSWORD")
}

// ScratchDBBefore is a scratch database (EmptyScratchDB) brought to the
// version before the migration named before: the versioned migrations
// older than it, applied as the owner, whose pool it returns (closed when
// the test ends). For tests of an upgrade: they seed rows, then migrate.Run.
func ScratchDBBefore(t testing.TB, suffix, before string) (string, *bun.DB) {
	t.Helper()
	url := EmptyScratchDB(t, suffix)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	owner, err := db.Open(ctx, url, db.Options{MaxOpenConns: 2})
	if err != nil {
		t.Fatalf("testkit: scratch database: %v", err)
	}
	t.Cleanup(func() { _ = owner.Close() })
	all, err := migrations.All()
	if err != nil {
		t.Fatalf("testkit: migrations: %v", err)
	}
	old := bunmigrate.NewMigrations()
	for _, m := range all.Sorted() {
		if m.Name < before {
			old.Add(m)
		}
	}
	m := bunmigrate.NewMigrator(owner, old, bunmigrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		t.Fatalf("testkit: migrate to %s: %v", before, err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		t.Fatalf("testkit: migrate to %s: %v", before, err)
	}
	return url, owner
}

// EmptyScratchDB is ScratchDB without the migrations: for tests that
// migrate in steps, such as upgrading a database that holds rows.
func EmptyScratchDB(t testing.TB, suffix string) string {
	t.Helper()
	owner := OwnerDB(t)
	u, err := url.Parse(OwnerURL())
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/") + "_" + suffix
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	scratch, err := db.Recreate(ctx, OwnerURL(), name)
	if err != nil {
		t.Fatalf("testkit: scratch database: %v", err)
	}
	t.Cleanup(func() {
		_, _ = owner.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return scratch
}

// ProxiedURL returns the owner URL of the migrated test database through a
// Proxy, so a test can take the database away (Cut, Pause) from what
// connects there without disturbing the shared server or other tests.
func ProxiedURL(t testing.TB) (string, *Proxy) {
	t.Helper()
	DB(t) // migrated
	u, err := url.Parse(OwnerURL())
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(t, u.Host)
	u.Host = p.Addr()
	return u.String(), p
}

// ProxiedDB returns an app-role pool on the migrated test database through
// a Proxy (see ProxiedURL).
func ProxiedDB(t testing.TB) (*bun.DB, *Proxy) {
	t.Helper()
	owner, p := ProxiedURL(t)
	appURL, err := db.AppURL(owner, os.Getenv("OFICINA_APP_DB_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.Open(context.Background(), appURL, db.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatalf("testkit: proxied database: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, p
}

// NATS starts an embedded JetStream server for one test.
func NATS(t testing.TB) *natsembed.Server {
	t.Helper()
	s, err := natsembed.Start(context.Background(), natsembed.Config{Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("testkit: nats: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// JetStream connects to a fresh embedded server (NATS) and creates
// Oficina's streams with cfg.
func JetStream(t testing.TB, cfg jsconfig.Config) jetstream.JetStream {
	t.Helper()
	nc, err := NATS(t).Connect()
	if err != nil {
		t.Fatalf("testkit: nats: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("testkit: jetstream: %v", err)
	}
	if err := jsconfig.Ensure(context.Background(), js, cfg); err != nil {
		t.Fatalf("testkit: streams: %v", err)
	}
	return js
}
