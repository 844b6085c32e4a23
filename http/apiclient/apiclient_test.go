package apiclient_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"oficina/http/apiclient"
)

const document = "../../docs/openapi.json"

// Issue 26 item 5: the client is what oapi-codegen makes of the document
// today: generating it again changes nothing (run go generate
// ./http/apiclient after make openapi otherwise).
func TestTheClientIsGeneratedFromTheCurrentDocument(t *testing.T) {
	// The configuration as committed, writing elsewhere.
	dir := t.TempDir()
	cfg, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "client.gen.go")
	cfg = []byte(strings.Replace(string(cfg), "output: client.gen.go", "output: "+out, 1))
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "oapi-codegen", "-config", filepath.Join(dir, "config.yaml"), document)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("http/apiclient/client.gen.go is stale: run go generate ./http/apiclient")
	}
}

// Issue 26 item 5: the generated client covers the whole document — a
// method for every operation, a type for every event of the webhooks
// section — so a Go integrator needs nothing written by hand.
func TestTheClientCoversEveryOperationAndEventType(t *testing.T) {
	raw, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths    map[string]map[string]struct{ OperationID string } `json:"paths"`
		Webhooks map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	ct := reflect.TypeFor[*apiclient.ClientWithResponses]()
	for i := range ct.NumMethod() {
		methods[ct.Method(i).Name] = true
	}
	n := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.OperationID == "" {
				continue
			}
			n++
			if name := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:] + "WithResponse"; !methods[name] {
				t.Errorf("%s %s (%s): no method %s", method, path, op.OperationID, name)
			}
		}
	}
	types := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), "client.gen.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				types[s.(*ast.TypeSpec).Name.Name] = true
			}
		}
	}
	events := 0
	for name, item := range doc.Webhooks {
		ref := item["post"].RequestBody.Content["application/json"].Schema.Ref
		typ := ref[strings.LastIndex(ref, "/")+1:]
		events++
		if !types[typ] {
			t.Errorf("event %s: no type %s", name, typ)
		}
	}
	if n < 40 || events < 30 {
		t.Fatalf("read %d operations and %d event types from the document", n, events)
	}
	t.Logf("%d operations, %d event types", n, events)
}
