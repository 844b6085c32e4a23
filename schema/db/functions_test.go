package db_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"oficina/ops/testkit"
	"oficina/schema/db"
)

func source(pkg string, files map[string]string) db.Functions {
	fs := fstest.MapFS{}
	for name, sql := range files {
		fs["sql/"+name] = &fstest.MapFile{Data: []byte(sql)}
	}
	return db.Functions{Package: pkg, FS: fs}
}

const probeV1 = `CREATE OR REPLACE FUNCTION oficina_probe(p_a integer) RETURNS integer LANGUAGE sql AS $$ SELECT p_a $$;`

// Decision 0020: each function has one file, named after it, which creates
// that function and nothing else and can run again; Migrate refuses any
// other layout before touching the database.
func TestFunctionFilesAreOnePerFunctionNamedAfterIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		sources []db.Functions
		want    string // in the error; empty: accepted
	}{
		{"one file per function", []db.Functions{source("a", map[string]string{"oficina_probe.sql": probeV1})}, ""},
		{"two packages define one function", []db.Functions{
			source("a", map[string]string{"oficina_probe.sql": probeV1}),
			source("b", map[string]string{"oficina_probe.sql": probeV1}),
		}, "two sources, a/sql/oficina_probe.sql and b/sql/oficina_probe.sql"},
		{"a file named after another function", []db.Functions{
			source("a", map[string]string{"oficina_other.sql": probeV1}),
		}, "must create function oficina_other"},
		{"a file creating two functions", []db.Functions{
			source("a", map[string]string{"oficina_probe.sql": probeV1 + "\n" + strings.ReplaceAll(probeV1, "probe", "probe2")}),
		}, "and nothing else"},
		{"a file that cannot run again", []db.Functions{
			source("a", map[string]string{"oficina_probe.sql": strings.Replace(probeV1, "OR REPLACE ", "", 1)}),
		}, "CREATE OR REPLACE"},
		{"a file not named after a function", []db.Functions{
			source("a", map[string]string{"Probe-1.sql": probeV1}),
		}, "not named after a function"},
		{"a package without files", []db.Functions{source("a", nil)}, "no sql/*.sql"},
	}
	for _, tc := range cases {
		_, err := db.ReadFunctions(tc.sources...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// Decision 0020: a file says only what its function is now. When its
// signature changes — the return type or argument names, which CREATE OR
// REPLACE refuses, or the argument types, which would make a second
// function — Migrate drops the old one, so one function of that name
// remains, with the privileges its file gives; an unchanged file is not
// run again; a function something depends on is not dropped.
func TestMigrateReplacesAFunctionWhoseSignatureChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testkit.ScratchDB(t, "signature")
	owner, err := db.Open(ctx, url, db.Options{MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	grants := func(sig string) string {
		return "\nREVOKE ALL ON FUNCTION " + sig + " FROM PUBLIC;\nGRANT EXECUTE ON FUNCTION " + sig + " TO oficina_worker;"
	}
	steps := []struct {
		name, sql, want string // want: the one oficina_probe left and its result type
		applied         bool
	}{
		{"created", probeV1 + grants("oficina_probe(integer)"), "oficina_probe(integer) integer", true},
		{"unchanged", probeV1 + grants("oficina_probe(integer)"), "oficina_probe(integer) integer", false},
		{"new return type",
			`CREATE OR REPLACE FUNCTION oficina_probe(p_a integer) RETURNS text LANGUAGE sql AS $$ SELECT p_a::text $$;` + grants("oficina_probe(integer)"),
			"oficina_probe(integer) text", true},
		{"new argument name",
			`CREATE OR REPLACE FUNCTION oficina_probe(p_b integer) RETURNS text LANGUAGE sql AS $$ SELECT p_b::text $$;` + grants("oficina_probe(integer)"),
			"oficina_probe(integer) text", true},
		{"new argument type",
			`CREATE OR REPLACE FUNCTION oficina_probe(p_b text) RETURNS text LANGUAGE sql AS $$ SELECT p_b $$;` + grants("oficina_probe(text)"),
			"oficina_probe(text) text", true},
	}
	for _, s := range steps {
		applied, err := db.Migrate(ctx, url, source("probe", map[string]string{"oficina_probe.sql": s.sql}))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := len(applied.Functions) == 1; got != s.applied {
			t.Errorf("%s: applied %v, want the function applied %v", s.name, applied.Functions, s.applied)
		}
		var fns []string
		if err := owner.NewRaw(`SELECT p.oid::regprocedure::text || ' ' || p.prorettype::regtype::text FROM pg_proc p
			WHERE p.proname = 'oficina_probe'`).Scan(ctx, &fns); err != nil {
			t.Fatal(err)
		}
		if len(fns) != 1 || fns[0] != s.want {
			t.Errorf("%s: %v, want %s alone", s.name, fns, s.want)
		}
		var app, worker bool
		sig := strings.Fields(s.want)[0]
		if err := owner.NewRaw("SELECT has_function_privilege('oficina_app', ?, 'EXECUTE'), has_function_privilege('oficina_worker', ?, 'EXECUTE')",
			sig, sig).Scan(ctx, &app, &worker); err != nil {
			t.Fatal(err)
		}
		if app || !worker {
			t.Errorf("%s: the app role may execute %v, the worker %v; want the file's grants (worker only)", s.name, app, worker)
		}
	}

	if _, err := owner.ExecContext(ctx, "CREATE VIEW probe_view AS SELECT oficina_probe('x') AS x"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Migrate(ctx, url, source("probe", map[string]string{"oficina_probe.sql": `CREATE OR REPLACE FUNCTION oficina_probe(p_b text) RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;`}))
	if err == nil || !strings.Contains(err.Error(), "drop the old oficina_probe(text)") {
		t.Errorf("changing the return type of a function a view uses: %v, want the drop refused", err)
	}
}
