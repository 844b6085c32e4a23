package apierr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// spelledOut lists the places of the running code where a field code's
// text may stand as a string because it is not a field code there: file
// (from the module root) → the texts allowed, each with its reason.
var spelledOut = map[string]map[string]string{
	// The JSON Schema keyword, in the generator and reader of the document.
	"http/openapi/schemas.go":  {"required": "JSON Schema keyword"},
	"http/portal/catalogue.go": {"required": "JSON Schema keyword"},
	// The destination guard's own reasons (kept in the delivery log), which
	// schema/webhooks folds into field codes by name.
	"dispatch/destguard/errors.go": {"invalid_url": "guard reason", "not_https": "guard reason",
		"userinfo": "guard reason", "unresolvable": "guard reason"},
	"schema/webhooks/validate.go": {"not_https": "guard reason", "userinfo": "guard reason",
		"unresolvable": "guard reason"},
}

// Issue 28 item 2: a field code (errors[].code) is named in Go only by the
// constants generated from the catalogue (codes_gen.go), so a code that
// is not in the catalogue cannot be written, and renaming one is a compile
// error rather than a finding of the fuzz targets. The running code, test
// files aside, has no string literal equal to a field code except where
// spelledOut says why. ops/proving keeps its own copy of the contract on
// purpose (it judges the server against the spec, not against itself).
func TestFieldCodesAreTheCataloguesConstants(t *testing.T) {
	t.Parallel()
	codes := map[string]bool{}
	for _, f := range Default.FieldCodes {
		codes[string(f.Code)] = true
	}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	used := map[string]map[string]bool{}
	var files int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "node_modules" || d.Name() == "var" ||
				rel == "ops/proving" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil // written from the catalogue or the document, not by hand (codes_gen.go, http/apiclient)
		}
		files++
		for _, lit := range fieldCodeLiterals(f, codes) {
			if _, ok := spelledOut[rel][lit.text]; ok {
				if used[rel] == nil {
					used[rel] = map[string]bool{}
				}
				used[rel][lit.text] = true
				continue
			}
			t.Errorf("%s: field code %q as a string: use the catalogue's constant", fset.Position(lit.pos), lit.text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files from %s: not the module?", files, root)
	}
	for file, texts := range spelledOut {
		for text := range texts {
			if !used[file][text] {
				t.Errorf("spelledOut: %s no longer spells %q: drop it from the list", file, text)
			}
		}
	}
}

type literal struct {
	pos  token.Pos
	text string
}

// fieldCodeLiterals finds the string literals of f equal to a field code,
// struct tags and import paths aside.
func fieldCodeLiterals(f *ast.File, codes map[string]bool) []literal {
	skip := map[*ast.BasicLit]bool{}
	var out []literal
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil {
				skip[n.Tag] = true
			}
		case *ast.ImportSpec:
			skip[n.Path] = true
		case *ast.BasicLit:
			if n.Kind != token.STRING || skip[n] {
				return true
			}
			if s, err := strconv.Unquote(n.Value); err == nil && codes[s] {
				out = append(out, literal{pos: n.Pos(), text: s})
			}
		}
		return true
	})
	slices.SortFunc(out, func(a, b literal) int { return int(a.pos - b.pos) })
	return out
}
