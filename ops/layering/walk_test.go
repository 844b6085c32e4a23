package layering_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// step is one line of the walk in docs/architecture.md: "N. `file` `Func`"
// or "N. `file` `Type.Method`".
var step = regexp.MustCompile("(?m)^\\d+\\. `([^`]+\\.go)` `([^`]+)`")

// Issue 28 item 4: the walk of one write is short enough to read — at
// most 12 steps, each a file and a function — and stays true: every step
// names a function (or method of the type named) declared in that file.
func TestTheWalkOfOneWriteNamesRealFunctions(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := step.FindAllStringSubmatch(string(doc), -1)
	if len(steps) == 0 || len(steps) > 12 {
		t.Fatalf("the walk has %d steps, want 1 to 12", len(steps))
	}
	for _, s := range steps {
		file, name := s[1], s[2]
		recv, fn, isMethod := strings.Cut(name, ".")
		if !isMethod {
			recv, fn = "", name
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("step %s %s: %v", file, name, err)
			continue
		}
		if !declares(f, recv, fn) {
			t.Errorf("step %s %s: no such function in the file", file, name)
		}
	}
}

// declares reports whether f declares the function fn, or with recv the
// method fn of type recv (pointer receiver or not).
func declares(f *ast.File, recv, fn string) bool {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn || (fd.Recv == nil) != (recv == "") {
			continue
		}
		if recv == "" {
			return true
		}
		t := fd.Recv.List[0].Type
		if st, ok := t.(*ast.StarExpr); ok {
			t = st.X
		}
		if ix, ok := t.(*ast.IndexExpr); ok {
			t = ix.X
		}
		if id, ok := t.(*ast.Ident); ok && id.Name == recv {
			return true
		}
	}
	return false
}
