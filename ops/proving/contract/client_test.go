package contract_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"oficina/ops/proving/contract"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// casts are what client.ts may not use to satisfy the generated types
// ("x as T", "<T>x", any, @ts- comments).
var (
	casts       = regexp.MustCompile(`\bas\s+[\w{(\[]|[=(,]\s*<[\w.\[\]"]+>\s*[\w(]|\bany\b`)
	tsDirective = regexp.MustCompile(`@ts-(ignore|expect-error|nocheck)`)
)

// A client generated from the document by a real generator
// (openapi-typescript) types a program that tsc --strict compiles without
// casts; run against a live server, the program creates a sale with only
// what spec 4.4 requires, captures a lead with only a phone (4.5) and
// patches one field of a service order, which changes that field and
// nothing else.
func TestAClientGeneratedFromTheDocumentSendsOnlyWhatTheSpecRequires(t *testing.T) {
	t.Parallel()
	nodeTools(t)
	noCasts(t)

	// Generate, then compile. tsc emits even with type errors, so that the
	// server side is proven whatever the types say.
	if _, stderr, code := run(t, nil, bin("openapi-typescript"), document, "--redocly", "generate.yaml",
		"--output", filepath.Join("generated", "openapi.d.ts")); code != 0 {
		t.Fatalf("openapi-typescript exited %d:\n%s", code, stderr)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "package.json"), []byte(`{"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, nil, bin("tsc"), "--project", "tsconfig.json", "--outDir", out, "--noEmitOnError", "false")
	typeErrors := diagnostics(stdout)
	summary := fmt.Sprintf("contract client: openapi-typescript + tsc --strict: %d type errors in client.ts", len(typeErrors))
	for _, d := range typeErrors {
		summary += "\n    " + d
	}
	if err := contract.WriteReport("ops/proving/contract client", summary+"\n"); err != nil {
		t.Log(err)
	}
	switch {
	case code != 0 && len(typeErrors) == 0:
		t.Fatalf("tsc exited %d:\n%s%s", code, stdout, stderr)
	case len(typeErrors) > 0:
		t.Error(summary)
	default:
		t.Log(summary)
	}
	program := filepath.Join(out, "client.js")
	if _, err := os.Stat(program); err != nil {
		t.Fatalf("tsc emitted no program: %v\n%s", err, stdout)
	}

	// A live server, a client record and an order with every field the
	// PATCH must leave alone.
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "service_orders:read", "service_orders:create", "service_orders:update",
		"sales:read", "sales:create", "leads:create", "leads:read", "tasks:create", "clients:read")
	do := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		r := api.Do(t, httpkit.Req{Method: method, Path: path, Key: key, Body: body})
		if r.Status != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, want, r.Raw)
		}
		return r.Body
	}
	admin := api.Admin(t, "POST", "/companies/"+co.Company.ID+"/clients", map[string]any{"name": "Carlos Pereira"})
	clientID, _ := admin.Body["id"].(string)
	if admin.Status != 201 || clientID == "" {
		t.Fatalf("admin client: %d %s", admin.Status, admin.Raw)
	}
	order := do("POST", "/service_orders", map[string]any{
		"client_id": clientID, "client_name": "Carlos Pereira", "client_phone": "+55 11 3333-4444",
		"client_description": "Ar-condicionado pingando", "service_address": "Rua das Flores, 10",
		"priority": "high", "internal_notes": "Portão azul", "scheduled_start": "2030-05-06T13:00:00Z",
		"scheduled_end": "2030-05-06T15:00:00Z", "discount_cents": 500, "additional_costs_cents": 1200,
		"items": []map[string]any{{"description": "Limpeza", "quantity": 2, "unit_price_cents": 8000, "total_cents": 16000}},
	}, 201)
	orderID, _ := order["id"].(string)
	before := do("GET", "/service_orders/"+orderID, nil, 200)

	stdout, stderr, code = run(t, []string{"OFICINA_API_URL=" + api.URL, "OFICINA_API_KEY=" + key,
		"OFICINA_CLIENT_ID=" + clientID, "OFICINA_ORDER_ID=" + orderID}, "node", program)
	if code != 0 {
		t.Fatalf("node client.js exited %d:\n%s\n%s", code, stdout, stderr)
	}
	steps := answers(t, stdout)

	t.Run("the sale is created with only client, items and plan", func(t *testing.T) {
		s := steps["sale"]
		if s.Status != 201 {
			t.Fatalf("POST /sales: %d, want 201: %v", s.Status, s.Body)
		}
		id, _ := s.Body["id"].(string)
		got := do("GET", "/sales/"+id, nil, 200)
		if got["client_id"] != clientID || got["payment_status"] != "paid" || got["total_cents"] != float64(25000) {
			t.Errorf("sale: client_id %v, payment_status %v, total_cents %v; want %s, paid, 25000",
				got["client_id"], got["payment_status"], got["total_cents"], clientID)
		}
	})
	t.Run("the lead is captured with a name and only a phone", func(t *testing.T) {
		s := steps["lead"]
		if s.Status != 201 {
			t.Fatalf("POST /leads: %d, want 201: %v", s.Status, s.Body)
		}
		lead, _ := s.Body["lead"].(map[string]any)
		if lead["name"] != "Joana Lima" || lead["phone"] != "+55 11 91234-5678" || lead["email"] != nil {
			t.Errorf("lead: %v", lead)
		}
		id, _ := lead["id"].(string)
		do("GET", "/clients/"+id, nil, 200)
	})
	t.Run("the PATCH of one field changes that field and nothing else", func(t *testing.T) {
		s := steps["patch"]
		if s.Status != 200 {
			t.Fatalf("PATCH /service_orders/{id}: %d, want 200: %v", s.Status, s.Body)
		}
		after := do("GET", "/service_orders/"+orderID, nil, 200)
		if after["internal_notes"] != "Levar escada de 3 m" {
			t.Errorf("internal_notes = %v, want the patched value", after["internal_notes"])
		}
		for _, k := range union(before, after) {
			if k == "internal_notes" || k == "updated_at" {
				continue
			}
			if !reflect.DeepEqual(before[k], after[k]) {
				t.Errorf("%s changed: %v → %v", k, jsonText(before[k]), jsonText(after[k]))
			}
		}
		if !reflect.DeepEqual(s.Body, after) {
			t.Errorf("the PATCH answered %v, the GET after it %v", jsonText(s.Body), jsonText(after))
		}
	})
}

// noCasts fails when client.ts satisfies the types by force.
func noCasts(t *testing.T) {
	t.Helper()
	src, err := os.ReadFile("client.ts")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(src), "\n") {
		code, comment, _ := strings.Cut(line, "//")
		code = strings.ReplaceAll(code, " as const", "") // a literal type, not a cast
		if casts.MatchString(code) || tsDirective.MatchString(comment) {
			t.Errorf("client.ts:%d forces a type (the document should type it): %s", i+1, strings.TrimSpace(line))
		}
	}
}

// diagnostics are tsc's error lines.
func diagnostics(out string) []string {
	var ds []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ": error TS") {
			ds = append(ds, strings.TrimSpace(l))
		}
	}
	return ds
}

type answer struct {
	Step   string         `json:"step"`
	Status int            `json:"status"`
	Body   map[string]any `json:"body"`
}

// answers reads the program's JSON lines by step.
func answers(t *testing.T, out string) map[string]answer {
	t.Helper()
	steps := map[string]answer{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("client.js printed %q: %v", sc.Text(), err)
		}
		steps[a.Step] = a
	}
	for _, s := range []string{"sale", "lead", "patch"} {
		if _, ok := steps[s]; !ok {
			t.Fatalf("client.js printed no %s step:\n%s", s, out)
		}
	}
	return steps
}

func union(a, b map[string]any) []string {
	var ks []string
	for k := range a {
		ks = append(ks, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	return ks
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
