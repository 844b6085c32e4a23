package layering_test

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "oficina/"

// kernel are the leaf packages under schema/ that every room, tenant and
// streams included, may use: identifiers, errors, times, fields, pages,
// the database and its migrations, secret sealing and signing, and the
// service base (logger and clocks of long-lived services). They import
// nothing of the module but each other. This is the one exception to
// "schema is above streams and tenant": the kernel lives under schema/
// beside the modules it serves, but sits below everything.
var kernel = []string{
	"schema/apierr", "schema/apierr/internal/gen", "schema/apitime", "schema/db", "schema/field",
	"schema/ids", "schema/migrations", "schema/page", "schema/secretbox", "schema/service", "schema/signing",
}

// rooms in order, highest first: a package may import its own room or a
// room below it.
var rooms = []string{"cmd", "ops", "http", "dispatch", "schema", "streams", "tenant", "kernel"}

// known lists the imports against the order that are still in the code,
// "from -> to" with the reason each stays for now (the lead removes
// them). Empty: keep it so.
var known = map[string]string{}

// roomOf names the room of a package path inside the module.
func roomOf(path string) string {
	if slices.Contains(kernel, path) {
		return "kernel"
	}
	top, _, _ := strings.Cut(path, "/")
	return top
}

// proving is the proving harness and the test kit: what only tests, the
// bench and the chaos runs use.
func proving(path string) bool {
	return strings.HasPrefix(path, "ops/proving/") || path == "ops/testkit" || strings.HasPrefix(path, "ops/testkit/")
}

// allowed says whether from may import to, both module paths without the
// module prefix, and if not why.
func allowed(from, to string) (bool, string) {
	rf, rt := slices.Index(rooms, roomOf(from)), slices.Index(rooms, roomOf(to))
	if rf < 0 || rt < 0 {
		return false, "a package outside the rooms " + strings.Join(rooms, ", ")
	}
	if rt < rf {
		return false, roomOf(to) + " is above " + roomOf(from)
	}
	if proving(to) && !proving(from) && roomOf(from) != "cmd" {
		return false, "the running system imports the proving harness or the test kit"
	}
	if (from == "ops/testkit" || from == "ops/testkit/hooks") && roomOf(to) == "http" {
		return false, "the test kit's base layer stays free of HTTP servers (ops/testkit/httpkit is the layer above)"
	}
	return true, ""
}

func TestTheOrderOfTheRooms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"cmd/oficina", "ops/stack", true},
		{"cmd/oficina", "ops/proving/bench", true},
		{"ops/stack", "http/public", true},
		{"http/admin", "schema/mail", true},
		{"dispatch", "schema/webhooks", true},
		{"schema/webhooks", "streams", true},
		{"schema/orders", "schema/clients", true},
		{"streams", "tenant", true},
		{"tenant", "schema/ids", true},
		{"streams", "schema/db", true},
		{"schema/ids", "schema/apierr", true},
		{"ops/proving/chaos", "ops/testkit/hooks", true},
		{"schema/webhooks", "dispatch/destguard", false},
		{"schema/webhooks", "ops/mail", false},
		{"dispatch", "http/wire", false},
		{"tenant", "schema/webhooks", false},
		{"tenant", "streams", false},
		{"schema/ids", "tenant", false},
		{"schema/db", "schema/webhooks", false},
		{"ops/stack", "ops/proving/bench", false},
		{"ops/mail", "ops/testkit", false},
		{"http/public", "cmd/oficina", false},
		{"ops/testkit", "http/public", false},
		{"ops/testkit/httpkit", "http/public", true},
	} {
		if ok, why := allowed(tc.from, tc.to); ok != tc.ok {
			t.Errorf("%s -> %s: allowed %v (%s), want %v", tc.from, tc.to, ok, why, tc.ok)
		}
	}
}

// Every non-test package imports only its own room or rooms below it
// (go list's Imports are the non-test imports).
func TestNoPackageImportsAgainstTheOrder(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		from := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			to, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			arrow := from + " -> " + to
			if ok, why := allowed(from, to); !ok {
				seen[arrow] = true
				if _, listed := known[arrow]; !listed {
					t.Errorf("%s: %s", arrow, why)
				}
			}
		}
	}
	// The receiver runs in the bench and chaos binaries: not a test's.
	hooks, err := exec.Command("go", "list", "-deps", module+"ops/testkit/hooks").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if slices.Contains(strings.Fields(string(hooks)), "testing") {
		t.Error("ops/testkit/hooks depends on package testing")
	}
	for arrow := range known {
		if !seen[arrow] {
			t.Errorf("%s is listed as known but no longer in the code: remove it from known", arrow)
		}
	}
}

// The kernel stays under schema/, whose name is also that of bun's schema
// package (decision 0025, amendment): oficina/schema is a package without
// code, only its doc.go, and no file imports it, tests included, so in Go
// `schema.` always means bun's package.
func TestTheSchemaDirectoryIsNoPackageToImport(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.GoFiles}} {{.CgoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}`, module+"schema").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "[doc.go] [] [] []" {
		t.Errorf("oficina/schema holds %s, want its doc.go alone", got)
	}
	doc, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", "schema", "doc.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Decls) > 0 {
		t.Errorf("schema/doc.go declares %d things: oficina/schema has no code", len(doc.Decls))
	}
	out, err = exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) > 1 && slices.Contains(fields[1:], module+"schema") {
			t.Errorf("%s imports oficina/schema, which has no code", fields[0])
		}
	}
}
