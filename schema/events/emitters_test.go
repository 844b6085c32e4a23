package events_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"oficina/schema/events"
)

// Every event a module emits is in the table: no streams.Change names its
// type with a bare string (each uses its module's Event constant), and
// every Event constant a module declares is catalogued. The catalogue walk
// (walk_test.go) then sees each emitted type arrive and checks it against
// the table at run time.
func TestEmittersUseCataloguedConstants(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	root := "../.."
	consts := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		inSchema := strings.HasPrefix(filepath.ToSlash(path), "../../schema/")
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				var changes []*ast.CompositeLit
				switch typ := n.Type.(type) {
				case *ast.ArrayType: // []streams.Change{{Type: …}}
					if isChange(typ.Elt, f.Name.Name) {
						for _, el := range n.Elts {
							if c, ok := el.(*ast.CompositeLit); ok && c.Type == nil {
								changes = append(changes, c)
							}
						}
					}
				default:
					if isChange(typ, f.Name.Name) {
						changes = append(changes, n)
					}
				}
				for _, c := range changes {
					for _, el := range c.Elts {
						kv, ok := el.(*ast.KeyValueExpr)
						if !ok || !isIdent(kv.Key, "Type") {
							continue
						}
						if lit, ok := kv.Value.(*ast.BasicLit); ok {
							t.Errorf("%s: streams.Change{Type: %s}: use the module's Event constant", fset.Position(lit.Pos()), lit.Value)
						}
					}
				}
			case *ast.ValueSpec:
				if !inSchema {
					return true
				}
				for i, id := range n.Names {
					if !strings.HasPrefix(id.Name, "Event") || !id.IsExported() || i >= len(n.Values) {
						continue
					}
					lit, ok := n.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					consts++
					if _, ok := events.Lookup(v); !ok {
						t.Errorf("%s: %s = %q is not in the event table", fset.Position(id.Pos()), id.Name, v)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if consts < len(events.Names()) {
		t.Errorf("found %d Event constants for %d catalogued names: the scan missed the modules", consts, len(events.Names()))
	}
}

// isChange reports a streams.Change type expression (Change inside package
// streams).
func isChange(e ast.Expr, pkg string) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return isIdent(e.X, "streams") && e.Sel.Name == "Change"
	case *ast.Ident:
		return pkg == "streams" && e.Name == "Change"
	}
	return false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
