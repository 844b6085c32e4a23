package migrate_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"oficina/ops/migrate"
	"oficina/ops/testkit"
	"oficina/schema/db"
)

// root is the module's directory, two levels above this package.
const root = "../.."

var (
	sqlCall = regexp.MustCompile(`\boficina_[a-z0-9_]+\(`)
	bodyAt  = regexp.MustCompile(`(?i)\bAS\s+\$([a-z_]*)\$`)
)

// walk calls fn with the module-relative path of every file for which keep
// says so, skipping hidden directories and var/ (build output).
func walk(t *testing.T, keep func(rel string) bool, fn func(rel string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "var" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if keep(rel) {
			fn(rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func files(t *testing.T) []db.FunctionFile {
	t.Helper()
	fns, err := db.ReadFunctions(migrate.Functions()...)
	if err != nil {
		t.Fatal(err)
	}
	return fns
}

// Issue 16 item 4, decision 0020: every oficina_* function the Go code
// calls has exactly one source, a sql/<function>.sql file of a package
// listed by migrate.Functions; every such file in the tree is listed (none
// forgotten, so none silently unapplied) and no two define one function.
func TestEveryCalledFunctionHasExactlyOneSource(t *testing.T) {
	t.Parallel()
	sources := map[string][]string{} // files(t) fails on a function with two files
	var listed, inTree []string
	for _, f := range files(t) {
		sources[f.Name] = append(sources[f.Name], f.Package+"/"+f.Path)
		listed = append(listed, f.Package+"/"+f.Path)
	}
	walk(t, func(rel string) bool {
		return strings.HasSuffix(rel, ".sql") && filepath.Base(filepath.Dir(rel)) == "sql"
	}, func(rel string) { inTree = append(inTree, rel) })
	sort.Strings(listed)
	sort.Strings(inTree)
	if !slices.Equal(listed, inTree) {
		t.Errorf("function files listed by migrate.Functions:\n%v\nin the tree:\n%v", listed, inTree)
	}

	calls := map[string][]string{}
	walk(t, func(rel string) bool {
		return strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go")
	}, func(rel string) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range sqlCall.FindAllString(string(b), -1) {
			name := strings.TrimSuffix(m, "(")
			calls[name] = append(calls[name], rel)
		}
	})
	if len(calls) < 20 {
		t.Fatalf("found %d functions called from Go: the scan missed the code", len(calls))
	}
	for name, where := range calls {
		if len(sources[name]) != 1 {
			t.Errorf("%s, called from %v, has sources %v, want exactly one sql/%s.sql", name, where, sources[name], name)
		}
	}
}

// body is the text between the dollar quotes of a function file's CREATE,
// which PostgreSQL keeps as the function's prosrc.
func body(t *testing.T, f db.FunctionFile) string {
	t.Helper()
	create := strings.Index(strings.ToUpper(f.SQL), "CREATE OR REPLACE FUNCTION")
	if create < 0 {
		t.Fatalf("%s/%s: no CREATE OR REPLACE FUNCTION", f.Package, f.Path)
	}
	m := bodyAt.FindStringSubmatchIndex(f.SQL[create:])
	if m == nil {
		t.Fatalf("%s/%s: no dollar-quoted body", f.Package, f.Path)
	}
	start := create + m[1]
	quote := "$" + f.SQL[create+m[2]:create+m[3]] + "$"
	end := strings.Index(f.SQL[start:], quote)
	if end < 0 {
		t.Fatalf("%s/%s: the body's %s does not close", f.Package, f.Path, quote)
	}
	return f.SQL[start : start+end]
}

// Decision 0020: after a migrate each function in the database is its
// file's (older migrations' bodies replaced), every oficina_* function has
// a file, and migrating again changes nothing.
func TestTheDatabasesFunctionsAreTheirFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	owner := testkit.OwnerDB(t) // migrated
	var inDB []struct {
		Name string `bun:"name"`
		Src  string `bun:"src"`
	}
	if err := owner.NewRaw(`SELECT p.proname AS name, p.prosrc AS src FROM pg_proc p
		WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'oficina\_%'`).Scan(ctx, &inDB); err != nil {
		t.Fatal(err)
	}
	byName := map[string]db.FunctionFile{}
	for _, f := range files(t) {
		byName[f.Name] = f
	}
	seen := map[string]bool{}
	for _, fn := range inDB {
		f, ok := byName[fn.Name]
		switch {
		case !ok:
			t.Errorf("%s is in the database but has no sql/%s.sql", fn.Name, fn.Name)
		case seen[fn.Name]:
			t.Errorf("%s is overloaded in the database", fn.Name)
		case fn.Src != body(t, f):
			t.Errorf("%s in the database is not %s/%s:\n%s", fn.Name, f.Package, f.Path, fn.Src)
		}
		seen[fn.Name] = true
	}
	for name, f := range byName {
		if !seen[name] {
			t.Errorf("%s/%s: %s is not in the database", f.Package, f.Path, name)
		}
	}

	applied, err := migrate.Run(ctx, testkit.OwnerURL())
	if err != nil {
		t.Fatal(err)
	}
	if len(applied.Migrations)+len(applied.Functions) > 0 {
		t.Errorf("migrating a migrated database applied %+v, want nothing", applied)
	}
}
